// What the window remembers between launches (window_settings.h): its size, the split between
// charts and table, the theme and the experiment come back in a new window; a settings file
// that cannot be read changes nothing.

#include <QCheckBox>
#include <QSettings>
#include <QSplitter>
#include <QTemporaryDir>
#include <QtTest>

#include "experiment_form.h"
#include "run_filter_bar.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "theme.h"
#include "window_settings.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::WindowUnderTest;

class TestWindowSettings : public QObject {
    Q_OBJECT

    QTemporaryDir folder_;

    QString settings_path() const { return folder_.filePath(QStringLiteral("scalelab.conf")); }

  private slots:
    void aNewWindowComesBackAsTheLastOneWasLeft() {
        QList<int> saved;
        {
            WindowUnderTest first;
            first.window.resize(1100, 1000);
            first.window.show();
            first.window.setTheme(Theme::Dark);
            RunSpec spec = first.window.form().spec();
            spec.lr = 0.123;
            spec.devices = 1;
            first.window.form().setSpec(spec);
            first.window.form().setRepeats(3);
            auto* splitter = qobject_cast<QSplitter*>(first.window.centralWidget());
            QVERIFY(splitter);
            splitter->setSizes({100, 1000});
            QTest::qWait(50);
            saved = splitter->sizes();
            // Not the default split (3 to 1), so that restoring it shows.
            QVERIFY2(saved[0] < 2 * saved[1],
                     qPrintable(QString("%1 %2").arg(saved[0]).arg(saved[1])));
            // The user showed the configuration and hid the notes.
            first.window.table().setColumnHidden(RunTableModel::ConfigurationColumn, false);
            first.window.table().setColumnHidden(RunTableModel::NotesColumn, true);
            first.window.filterBar().differencesBox().setChecked(true);
            QSettings settings(settings_path(), QSettings::IniFormat);
            save_window_settings(first.window, settings);
        }
        WindowUnderTest second;
        QCOMPARE(second.window.theme(), Theme::Light);
        // As main() does: shown first, so that the split is restored on the laid-out window.
        second.window.show();
        QTest::qWait(50);
        QSettings settings(settings_path(), QSettings::IniFormat);
        restore_window_settings(second.window, settings, false);
        QTest::qWait(50);
        QCOMPARE(second.window.theme(), Theme::Dark);
        QCOMPARE(second.window.form().spec().lr, 0.123);
        QCOMPARE(second.window.form().spec().devices, 1);
        QCOMPARE(second.window.form().repeats(), 3);
        QCOMPARE(second.window.size(), QSize(1100, 1000));
        const QList<int> sizes = qobject_cast<QSplitter*>(second.window.centralWidget())->sizes();
        QCOMPARE(sizes, saved);
        QVERIFY(!second.window.table().isColumnHidden(RunTableModel::ConfigurationColumn));
        QVERIFY(second.window.table().isColumnHidden(RunTableModel::NotesColumn));
        QVERIFY(second.window.filterBar().differencesBox().isChecked());

        // A --theme given on the command line wins over the remembered one.
        WindowUnderTest third;
        restore_window_settings(third.window, settings, true);
        QCOMPARE(third.window.theme(), Theme::Light);
    }

    void unreadableSettingsChangeNothing() {
        QSettings settings(folder_.filePath(QStringLiteral("bad.conf")), QSettings::IniFormat);
        settings.setValue(QStringLiteral("window/geometry"), QByteArray("not a geometry"));
        settings.setValue(QStringLiteral("window/theme"), QStringLiteral("purple"));
        settings.setValue(QStringLiteral("form/experiment"), QByteArray("{\"lr\": \"fast\"}"));
        WindowUnderTest window;
        const RunSpec before = window.window.form().spec();
        restore_window_settings(window.window, settings, false);
        QCOMPARE(window.window.theme(), Theme::Light);
        QCOMPARE(window.window.form().spec().lr, before.lr);
        settings.setValue(QStringLiteral("table/columns"), QByteArray("not a header"));
        QVERIFY(!window.window.table().restoreColumns(QByteArray("not a header")));
        QVERIFY(window.window.table().isColumnHidden(RunTableModel::ConfigurationColumn));
    }
};

QTEST_MAIN(TestWindowSettings)
#include "test_window_settings.moc"
