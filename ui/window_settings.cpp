#include "window_settings.h"

#include <QCheckBox>
#include <QJsonDocument>
#include <QSettings>
#include <QSplitter>

#include "error.h"
#include "experiment_form.h"
#include "main_window.h"
#include "run_filter_bar.h"
#include "run_spec_json.h"
#include "run_table_view.h"
#include "theme.h"

namespace scalelab {

namespace {

// The keys, with the version of what they hold: a later layout may read them differently.
const QString geometry_key = QStringLiteral("window/geometry");
const QString state_key = QStringLiteral("window/state");
const QString splitter_key = QStringLiteral("window/charts_table_split");
const QString table_columns_key = QStringLiteral("table/columns");
const QString what_differs_key = QStringLiteral("table/what_differs");
const QString theme_key = QStringLiteral("window/theme");
const QString experiment_key = QStringLiteral("form/experiment");

QSplitter* charts_table_splitter(MainWindow& window) {
    return qobject_cast<QSplitter*>(window.centralWidget());
}

}  // namespace

void save_window_settings(MainWindow& window, QSettings& settings) {
    if (!window.presenterMode()) {
        settings.setValue(geometry_key, window.saveGeometry());
        settings.setValue(state_key, window.saveState());
        if (QSplitter* splitter = charts_table_splitter(window))
            settings.setValue(splitter_key, splitter->saveState());
    }
    settings.setValue(table_columns_key, window.table().saveColumns());
    settings.setValue(what_differs_key, window.filterBar().differencesBox().isChecked());
    settings.setValue(theme_key, window.theme() == Theme::Dark ? QStringLiteral("dark")
                                                               : QStringLiteral("light"));
    const Experiment experiment{.spec = window.form().spec(), .repeats = window.form().repeats()};
    settings.setValue(experiment_key, QJsonDocument(experiment_to_json(experiment)).toJson());
    settings.sync();
}

void restore_window_settings(MainWindow& window, QSettings& settings, bool keep_theme) {
    window.restoreGeometry(settings.value(geometry_key).toByteArray());
    window.restoreState(settings.value(state_key).toByteArray());
    if (QSplitter* splitter = charts_table_splitter(window))
        splitter->restoreState(settings.value(splitter_key).toByteArray());
    // The box first: ticking it shows the configuration column, which the columns restored
    // next may hide again, as the user left them.
    window.filterBar().differencesBox().setChecked(settings.value(what_differs_key).toBool());
    window.table().restoreColumns(settings.value(table_columns_key).toByteArray());
    const QString theme = settings.value(theme_key).toString();
    if (!keep_theme && (theme == QLatin1String("dark") || theme == QLatin1String("light")))
        window.setTheme(theme == QLatin1String("dark") ? Theme::Dark : Theme::Light);
    const QByteArray experiment = settings.value(experiment_key).toByteArray();
    if (experiment.isEmpty())
        return;
    try {
        const Experiment saved = experiment_from_json(experiment);
        window.form().setRepeats(saved.repeats);
        window.form().setSpec(saved.spec);
    } catch (const Error&) {
        // Written by another version, or edited: the form keeps its default experiment.
    }
}

}  // namespace scalelab
