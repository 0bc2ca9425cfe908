#include "theme.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>
#include <QWidget>

#include <memory>

#include "colour_contrast.h"

namespace scalelab {

namespace {

QPalette dark_palette() {
    const QColor window(0x2b, 0x2d, 0x31);
    const QColor base(0x1e, 0x1f, 0x22);
    const QColor text(0xe6, 0xe6, 0xe6);
    const QColor disabled(0x8a, 0x8a, 0x8a);  // 4.5:1 on the window colour
    const QColor accent(0x4e, 0x79, 0xa7);

    QPalette palette;
    palette.setColor(QPalette::Window, window);
    palette.setColor(QPalette::WindowText, text);
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::AlternateBase, window);
    palette.setColor(QPalette::ToolTipBase, base);
    palette.setColor(QPalette::ToolTipText, text);
    palette.setColor(QPalette::PlaceholderText, disabled);
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Button, window);
    palette.setColor(QPalette::ButtonText, text);
    palette.setColor(QPalette::BrightText, Qt::red);
    palette.setColor(QPalette::Light, window.lighter(150));
    palette.setColor(QPalette::Midlight, window.lighter(125));
    palette.setColor(QPalette::Mid, window.darker(120));
    palette.setColor(QPalette::Dark, window.darker(150));
    palette.setColor(QPalette::Shadow, Qt::black);
    palette.setColor(QPalette::Link, accent.lighter(140));
    palette.setColor(QPalette::Highlight, accent);
    palette.setColor(QPalette::HighlightedText, Qt::white);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        palette.setColor(QPalette::Disabled, role, disabled);
    return palette;
}

// A message colour of hue `colour`, readable on both the window and the base colour of `theme`.
QColor message_colour(const QColor& colour, Theme theme) {
    const QPalette palette = theme_palette(theme);
    const QColor on_window = readable_on(colour, palette.color(QPalette::Window), text_contrast);
    return readable_on(on_window, palette.color(QPalette::Base), text_contrast);
}

// Widgets under a style sheet were given a palette when polished; setting their sheet again
// polishes them with the application's current one.
void repolish_style_sheets(QApplication& app) {
    for (QWidget* widget : app.allWidgets()) {
        const QString sheet = widget->styleSheet();
        if (sheet.isEmpty())
            continue;
        widget->setStyleSheet(QString());
        widget->setStyleSheet(sheet);
    }
}

}  // namespace

QPalette theme_palette(Theme theme) {
    if (theme == Theme::Dark)
        return dark_palette();
    static const QPalette light = [] {
        const std::unique_ptr<QStyle> fusion(QStyleFactory::create(QStringLiteral("Fusion")));
        return fusion->standardPalette();
    }();
    return light;
}

Theme theme_of(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128 ? Theme::Dark : Theme::Light;
}

Theme current_theme() {
    return theme_of(QApplication::palette());
}

QColor problem_colour(Theme theme) {
    return message_colour(QColor(0xd3, 0x2f, 0x2f), theme);
}

QColor warning_colour(Theme theme) {
    return message_colour(QColor(0xc7, 0x7c, 0x02), theme);
}

QColor success_colour(Theme theme) {
    return message_colour(QColor(0x2e, 0x7d, 0x32), theme);
}

void show_in_problem_colour(QWidget& label) {
    QPalette red;
    red.setColor(QPalette::WindowText, problem_colour(current_theme()));
    label.setPalette(red);
}

void apply_theme(QApplication& app, Theme theme) {
    if (app.style()->name() != QLatin1String("fusion"))
        app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(theme_palette(theme));
    repolish_style_sheets(app);
}

}  // namespace scalelab
