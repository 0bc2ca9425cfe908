#include "run_palette.h"

#include <array>

#include "chart_style.h"
#include "colour_contrast.h"

namespace scalelab {

namespace {

using RunColours = std::array<QColor, run_colour_count>;

// The set, each colour made readable on `theme`'s chart background.
RunColours readable_set(Theme theme) {
    static constexpr std::array<QRgb, run_colour_count> bright = {
        0x4477aa, 0xee6677, 0x228833, 0xccbb44, 0x66ccee, 0xaa3377, 0xbbbbbb, 0xe06000};
    const QColor background = chart_background(theme == Theme::Dark);
    RunColours colours;
    for (std::size_t i = 0; i < bright.size(); ++i)
        colours[i] = readable_on(QColor(bright[i]), background, graphics_contrast);
    return colours;
}

}  // namespace

QColor run_colour(int index, Theme theme) {
    // Computed once a theme: tables and charts ask for run colours at every paint.
    static const RunColours light = readable_set(Theme::Light);
    static const RunColours dark = readable_set(Theme::Dark);
    const auto slot = std::size_t(index < 0 ? -index : index) % std::size_t(run_colour_count);
    return (theme == Theme::Dark ? dark : light)[slot];
}

QColor run_colour(int index) {
    return run_colour(index, current_theme());
}

}  // namespace scalelab
