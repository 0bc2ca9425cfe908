// Run colours (run_palette.h) and the contrast rules behind them (colour_contrast.h): every run
// colour stands out from the chart background of both themes (WCAG 3:1 for lines; text in a
// run's colour is made 4.5:1 by readable_on), and the colours stay apart for viewers with colour
// blindness.

#include <QtTest>

#include <array>
#include <cmath>

#include "chart_style.h"
#include "colour_contrast.h"
#include "run_palette.h"
#include "theme.h"

using namespace scalelab;

namespace {

using Vector = std::array<double, 3>;
using Matrix = std::array<Vector, 3>;

double linear(double encoded) {
    return encoded <= 0.04045 ? encoded / 12.92 : std::pow((encoded + 0.055) / 1.055, 2.4);
}

// How a colour looks with full protanopia, deuteranopia or tritanopia: the matrices of Machado,
// Oliveira and Fernandes (2009) at severity 1.0, applied to linear RGB.
constexpr std::array<Matrix, 3> colour_blindness = {{
    {{{0.152286, 1.052583, -0.204868},
      {0.114503, 0.786281, 0.099216},
      {-0.003882, -0.048116, 1.051998}}},
    {{{0.367322, 0.860646, -0.227968},
      {0.280085, 0.672501, 0.047413},
      {-0.011820, 0.042940, 0.968881}}},
    {{{1.255528, -0.076749, -0.178779},
      {-0.078411, 0.930809, 0.147602},
      {0.004733, 0.691367, 0.303900}}},
}};

// CIELAB (D65) of a linear RGB colour.
Vector lab(const Vector& rgb) {
    const double x = 0.4124 * rgb[0] + 0.3576 * rgb[1] + 0.1805 * rgb[2];
    const double y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
    const double z = 0.0193 * rgb[0] + 0.1192 * rgb[1] + 0.9505 * rgb[2];
    const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
    const double fx = f(x / 0.9505);
    const double fy = f(y);
    const double fz = f(z / 1.089);
    return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

Vector seen(const QColor& colour, const Matrix* deficiency) {
    Vector rgb = {linear(colour.redF()), linear(colour.greenF()), linear(colour.blueF())};
    if (deficiency != nullptr) {
        Vector simulated{};
        for (std::size_t i = 0; i < 3; ++i)
            simulated[i] = std::clamp((*deficiency)[i][0] * rgb[0] + (*deficiency)[i][1] * rgb[1] +
                                          (*deficiency)[i][2] * rgb[2],
                                      0.0, 1.0);
        rgb = simulated;
    }
    return lab(rgb);
}

// The smallest CIE76 colour difference between two run colours, as seen with `deficiency`
// (nullptr: normal vision).
double closest_pair(Theme theme, const Matrix* deficiency) {
    double closest = 1e9;
    for (int a = 0; a < run_colour_count; ++a)
        for (int b = a + 1; b < run_colour_count; ++b) {
            const Vector la = seen(run_colour(a, theme), deficiency);
            const Vector lb = seen(run_colour(b, theme), deficiency);
            closest = std::min(closest, std::hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]));
        }
    return closest;
}

}  // namespace

class TestRunPalette : public QObject {
    Q_OBJECT

  private slots:
    void contrastRatioFollowsWcag() {
        QCOMPARE(contrast_ratio(Qt::black, Qt::white), 21.0);
        QCOMPARE(contrast_ratio(Qt::white, Qt::white), 1.0);
        // WCAG's own example: #767676 on white is the lightest grey that passes AA (4.54:1).
        QVERIFY(std::abs(contrast_ratio(QColor(0x76, 0x76, 0x76), Qt::white) - 4.54) < 0.01);
    }

    void readableOnMovesOnlyTheLightness() {
        const QColor yellow(0xcc, 0xbb, 0x44);
        QVERIFY(contrast_ratio(yellow, Qt::white) < graphics_contrast);
        const QColor darker = readable_on(yellow, Qt::white, graphics_contrast);
        QVERIFY(contrast_ratio(darker, Qt::white) >= graphics_contrast);
        QVERIFY(contrast_ratio(darker, Qt::white) < graphics_contrast + 0.2);  // the least change
        QVERIFY(std::abs(darker.hslHue() - yellow.hslHue()) <= 2);
        const QColor navy(0x10, 0x20, 0x60);
        QVERIFY(readable_on(navy, Qt::black, text_contrast).lightness() > navy.lightness());
        QCOMPARE(readable_on(Qt::black, Qt::white, text_contrast), QColor(Qt::black));
    }

    void runColoursStandOutFromEachBackground() {
        for (const Theme theme : {Theme::Light, Theme::Dark}) {
            const QColor background = chart_background(theme == Theme::Dark);
            for (int index = 0; index < 2 * run_colour_count; ++index)
                QVERIFY2(contrast_ratio(run_colour(index, theme), background) >= graphics_contrast,
                         qPrintable(run_colour(index, theme).name()));
            QCOMPARE(run_colour(run_colour_count, theme), run_colour(0, theme));
        }
    }

    void runColoursStayApartForColourBlindViewers() {
        // 8 CIELAB units between the closest two colours: told apart side by side.
        for (const Theme theme : {Theme::Light, Theme::Dark}) {
            // The figures, printed: normal vision, protanopia, deuteranopia, tritanopia.
            QStringList distances{QString::number(closest_pair(theme, nullptr), 'f', 1)};
            for (const Matrix& deficiency : colour_blindness)
                distances << QString::number(closest_pair(theme, &deficiency), 'f', 1);
            qInfo("closest run colours, %s theme (normal, protan, deutan, tritan): %s",
                  theme == Theme::Dark ? "dark" : "light", qPrintable(distances.join(", ")));
            QVERIFY(closest_pair(theme, nullptr) >= 8);
            for (const Matrix& deficiency : colour_blindness)
                QVERIFY2(closest_pair(theme, &deficiency) >= 8,
                         qPrintable(QString::number(closest_pair(theme, &deficiency))));
        }
    }
};

QTEST_MAIN(TestRunPalette)
#include "test_run_palette.moc"
