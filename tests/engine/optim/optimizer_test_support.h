#pragma once

// What the optimiser tests share: a tolerant comparison against hand-computed values, a
// finiteness check, the two-tensor layout (a weight and a bias) they update, and the outcome
// of building an optimiser from a config.

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "error.h"
#include "optim/parameter_segment.h"

namespace scalelab::testing {

// The optimisers compute in float; hand values are decimals or short expressions, so compare
// with a tolerance a little above float rounding over a few steps.
inline bool near(double actual, double expected, double tolerance = 1e-6) {
    return std::abs(actual - expected) <= tolerance * std::max(1.0, std::abs(expected));
}

inline bool all_finite(const std::vector<float>& values) {
    return std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); });
}

// A weight [0, 2) and a bias [2, 4).
inline std::vector<optim::ParamSegment> weight_and_bias() {
    return {{"fc.weight", optim::ParamRole::Weight, 0, 2},
            {"fc.bias", optim::ParamRole::Bias, 2, 2}};
}

// What building optimiser Opt with `config` says: "accepted", the InvalidSpec message, or
// "wrong kind" for any other error.
template <class Opt, class Config>
std::string construction_error(const Config& config) {
    try {
        Opt optimizer(weight_and_bias(), config);
    } catch (const Error& error) {
        return error.kind() == ErrorKind::InvalidSpec ? std::string(error.what())
                                                      : std::string("wrong kind");
    }
    return "accepted";
}

// A step over weight_and_bias() (4 values) with gradients of the wrong length, and one with
// the learning rate `bad_lr`: each must throw an Error and leave the optimiser at step 0.
template <class Opt>
void check_bad_steps_rejected(Opt& optimizer, double bad_lr) {
    std::vector<float> p(4, 1.0f);
    const std::vector<float> g3(3, 0.0f);
    const std::vector<float> g(4, 0.0f);
    QVERIFY_THROWS_EXCEPTION(Error, optimizer.step(p, g3, 0.1));
    QVERIFY_THROWS_EXCEPTION(Error, optimizer.step(p, g, bad_lr));
    QCOMPARE(optimizer.steps(), std::int64_t{0});
}

}  // namespace scalelab::testing

// Compares a buffer with the hand-computed values listed after it, naming the first index off.
#define CHECK_VALUES(actual, ...)                                                      \
    do {                                                                               \
        const std::vector<double> expected_{__VA_ARGS__};                              \
        QCOMPARE(static_cast<std::size_t>((actual).size()), expected_.size());         \
        for (std::size_t i_ = 0; i_ < expected_.size(); ++i_) {                        \
            QVERIFY2(scalelab::testing::near((actual)[i_], expected_[i_]),             \
                     qPrintable(QStringLiteral("index %1: got %2, expected %3")        \
                                    .arg(i_)                                           \
                                    .arg(static_cast<double>((actual)[i_]), 0, 'g', 9) \
                                    .arg(expected_[i_], 0, 'g', 9)));                  \
        }                                                                              \
    } while (false)
