// One theme for every widget (theme.h): switching the window to dark and back leaves no widget,
// menu or toolbar with the other theme's colours, and the colours the themes derive for
// messages are readable on them (WCAG AA).

#include <QLabel>
#include <QMenuBar>
#include <QToolBar>
#include <QtTest>

#include "colour_contrast.h"
#include "experiment_form.h"
#include "theme.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::WindowUnderTest;

namespace {

// The roles a widget is drawn with, for its background and its text.
constexpr std::array<QPalette::ColorRole, 6> drawn_roles = {QPalette::Window, QPalette::WindowText,
                                                            QPalette::Base,   QPalette::Text,
                                                            QPalette::Button, QPalette::ButtonText};

Theme other(Theme theme) {
    return theme == Theme::Dark ? Theme::Light : Theme::Dark;
}

// "QSpinBox batch: Window is #efefef, the light theme's" for every widget of `window` (itself,
// its menus, toolbars, docks and everything in them) that draws a role in `theme`'s other
// colour.
QStringList leftovers(QWidget& window, Theme theme) {
    const QPalette wrong = theme_palette(other(theme));
    const QPalette right = theme_palette(theme);
    QList<QWidget*> widgets = window.findChildren<QWidget*>();
    widgets.prepend(&window);
    QStringList found;
    for (QWidget* widget : widgets) {
        for (const QPalette::ColorRole role : drawn_roles) {
            const QColor colour = widget->palette().color(QPalette::Active, role);
            if (right.color(role) != wrong.color(role) && colour == wrong.color(role))
                found << QStringLiteral("%1 %2: role %3 is %4, the other theme's")
                             .arg(QString::fromLatin1(widget->metaObject()->className()),
                                  widget->objectName())
                             .arg(int(role))
                             .arg(colour.name());
        }
    }
    return found;
}

// The colour drawn a few pixels in from the right edge, half-way down.
QColor far_right_pixel(QWidget& widget) {
    const QImage image = widget.grab().toImage();
    return image.pixelColor(image.width() - 4, image.height() / 2);
}

// Within a few steps a channel: Fusion shades bars with a faint gradient.
bool close_to(const QColor& drawn, const QColor& expected) {
    const bool close = std::abs(drawn.red() - expected.red()) <= 8 &&
                       std::abs(drawn.green() - expected.green()) <= 8 &&
                       std::abs(drawn.blue() - expected.blue()) <= 8;
    if (!close)
        qWarning("drawn %s, expected about %s", qPrintable(drawn.name()),
                 qPrintable(expected.name()));
    return close;
}

}  // namespace

class TestTheme : public QObject {
    Q_OBJECT

  private slots:
    void switchingBothWaysLeavesNoWidgetInTheOtherTheme() {
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        window.setTheme(Theme::Light);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // A problem shown at a field: its label is styled by the form's sheet.
        RunSpec spec = window.form().spec();
        spec.epochs = 0;
        window.form().setSpec(spec);
        QVERIFY(!window.form().isValid());

        for (const Theme theme : {Theme::Dark, Theme::Light, Theme::Dark}) {
            window.setTheme(theme);
            QTest::qWait(20);
            const QStringList wrong = leftovers(window, theme);
            QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QLatin1Char('\n'))));
            // What is drawn, not only the palettes: the far right of the menu bar and the
            // toolbar is bare background.
            const QColor background = theme_palette(theme).color(QPalette::Window);
            QVERIFY(close_to(far_right_pixel(*window.menuBar()), background));
            for (QToolBar* toolbar : window.findChildren<QToolBar*>())
                QVERIFY(close_to(far_right_pixel(*toolbar), background));
            // The form's problem lines take this theme's red.
            const QList<QLabel*> labels = window.form().findChildren<QLabel*>();
            const auto problem = std::find_if(labels.begin(), labels.end(), [](QLabel* label) {
                return label->property("role").toString() == QLatin1String("problem") &&
                       !label->text().isEmpty();
            });
            QVERIFY(problem != labels.end());
            QCOMPARE((*problem)->palette().color(QPalette::WindowText), problem_colour(theme));
        }
    }

    void theLeftoverCheckFindsAWidgetThatKeepsItsPalette() {
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        window.setTheme(Theme::Light);
        auto* stubborn = new QLabel(QStringLiteral("fixed"), &window);
        stubborn->setPalette(theme_palette(Theme::Light));
        window.setTheme(Theme::Dark);
        QVERIFY(!leftovers(window, Theme::Dark).isEmpty());
        window.setTheme(Theme::Light);
    }

    void messageColoursAreReadableOnEachTheme() {
        for (const Theme theme : {Theme::Light, Theme::Dark}) {
            const QPalette palette = theme_palette(theme);
            for (const QColor& colour :
                 {problem_colour(theme), warning_colour(theme), success_colour(theme)})
                for (const QPalette::ColorRole role : {QPalette::Window, QPalette::Base})
                    QVERIFY2(contrast_ratio(colour, palette.color(role)) >= text_contrast,
                             qPrintable(colour.name()));
            QVERIFY(contrast_ratio(palette.color(QPalette::Text), palette.color(QPalette::Base)) >=
                    text_contrast);
        }
        QCOMPARE(theme_of(theme_palette(Theme::Dark)), Theme::Dark);
        QCOMPARE(theme_of(theme_palette(Theme::Light)), Theme::Light);
    }
};

QTEST_MAIN(TestTheme)
#include "test_theme.moc"
