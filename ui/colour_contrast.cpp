#include "colour_contrast.h"

#include <algorithm>
#include <cmath>

namespace scalelab {

namespace {

// sRGB's transfer function undone: the channel's share of light, 0 to 1.
double linear_channel(double encoded) {
    return encoded <= 0.04045 ? encoded / 12.92 : std::pow((encoded + 0.055) / 1.055, 2.4);
}

}  // namespace

double relative_luminance(const QColor& colour) {
    return 0.2126 * linear_channel(colour.redF()) + 0.7152 * linear_channel(colour.greenF()) +
           0.0722 * linear_channel(colour.blueF());
}

double contrast_ratio(const QColor& a, const QColor& b) {
    const double la = relative_luminance(a);
    const double lb = relative_luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor readable_on(const QColor& colour, const QColor& background, double ratio) {
    // Luminance is monotonic in HSL lightness at a fixed hue and saturation, so a bisection on
    // the lightness between the colour's own and the far end (black or white) finds the least
    // change that reaches the ratio; the far end itself reaches it whenever any colour can.
    if (contrast_ratio(colour, background) >= ratio)
        return colour;
    const bool darken = relative_luminance(background) > 0.18;
    const float hue = std::max(0.0F, colour.hslHueF());  // -1 for greys
    const float saturation = colour.hslSaturationF();
    float near = colour.lightnessF();
    float far = darken ? 0.0F : 1.0F;
    // Colours are compared as they will be used: 8 bits a channel, as #rrggbb names them.
    const auto at = [&](float lightness) {
        return QColor(QColor::fromHslF(hue, saturation, lightness).rgb());
    };
    for (int i = 0; i < 24; ++i) {
        const float middle = (near + far) / 2;
        if (contrast_ratio(at(middle), background) >= ratio)
            far = middle;
        else
            near = middle;
    }
    return at(far);
}

}  // namespace scalelab
