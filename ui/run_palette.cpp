#include "run_palette.h"

#include <array>

#include "chart_style.h"
#include "colour_contrast.h"

namespace scalelab {

namespace {

QColor background_of(Theme theme) {
    return chart_background(theme == Theme::Dark);
}

}  // namespace

QColor run_colour(int index, Theme theme) {
    static constexpr std::array<QRgb, run_colour_count> bright = {
        0x4477aa, 0xee6677, 0x228833, 0xccbb44, 0x66ccee, 0xaa3377, 0xbbbbbb, 0xe06000};
    const auto slot = std::size_t(index < 0 ? -index : index) % bright.size();
    return readable_on(QColor(bright[slot]), background_of(theme), graphics_contrast);
}

QColor run_colour(int index) {
    return run_colour(index, current_theme());
}

}  // namespace scalelab
