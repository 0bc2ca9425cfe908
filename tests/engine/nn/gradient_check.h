#pragma once

// Finite-difference gradient checks for layers on the CPU backend. The checked function is
//   L(x, params) = sum_i r_i * flatten(layer(x))_i
// for a fixed random r, so dL/dy = r and every output element matters. The analytic gradient
// comes from the layer's backward(); the numeric one from central differences
//   dL/dv ~ (L(v + h) - L(v - h)) / 2h
// at a sample of input and parameter coordinates. ReLU and max pooling have kinks: where a
// perturbation of +-h moves some output across one, the one-sided differences (L(v+h) - L(v))/h
// and (L(v) - L(v-h))/h disagree, and that coordinate is not a fair test; such coordinates are
// skipped and counted, and a check fails when more than a quarter of them had to be skipped.

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "nn/flatten.h"
#include "nn/model.h"
#include "nn/sequential.h"

namespace scalelab::testing {

struct GradientError {
    double worst = 0;  // max |numeric - analytic| / max(1, |numeric|, |analytic|)
    std::string where;
    int checked = 0;
    int skipped_at_kinks = 0;
};

class GradientCheck {
  public:
    // The layer is wrapped as Sequential{layer, flatten} so the output comes back plain.
    GradientCheck(std::unique_ptr<nn::Layer> layer, Shape input, std::uint64_t seed = 1)
        : backend_(1), input_(input) {
        auto root = std::make_unique<nn::Sequential>("check");
        root->add(std::move(layer)).emplace<nn::Flatten>("flatten");
        root_ = root.get();
        model_ = std::make_unique<nn::Model>(std::move(root), input, backend_, seed);
        std::mt19937 rng(unsigned(seed) + 7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        x_.resize(input.numel());
        for (auto& v : x_)
            v = u(rng);
        r_.resize(root_->output_shape(input).numel());
        for (auto& v : r_)
            v = u(rng);
    }

    std::vector<float>& input() { return x_; }
    // Training passes run with this as nn::Context::sync_bn (synchronised batch norm).
    void set_sync_bn(comm::Communicator* group) { sync_bn_ = group; }
    nn::Model& model() { return *model_; }

    // The layer's output, flattened to (n, features) in NCHW order.
    std::vector<float> output(bool training) {
        const nn::Context ctx{backend_, training, 42, {}, sync_bn_};
        const Tensor y = root_->forward(Tensor{TensorDesc{input_, nullptr}, x_.data()}, ctx);
        return std::vector<float>(y.data, y.data + r_.size());
    }

    double loss(bool training = true) {
        const std::vector<float> y = output(training);
        double l = 0;
        for (std::size_t i = 0; i < r_.size(); ++i)
            l += double(r_[i]) * y[i];
        return l;
    }

    // Analytic gradients: returns dL/dx; dL/dparams are left in model().grads().
    std::vector<float> analytic() {
        loss(true);
        const nn::Context ctx{backend_, true, 42, {}, sync_bn_};
        const Tensor dx = root_->backward(
            Tensor{TensorDesc{root_->output_shape(input_), nullptr}, r_.data()}, ctx, true);
        return std::vector<float>(dx.data, dx.data + input_.numel());
    }

    // Compares analytic and numeric gradients at up to `samples` coordinates of the input and
    // of the parameters (all of them when there are fewer).
    GradientError check(int samples = 24, double h = 1e-3, double kink_tolerance = 2e-2) {
        const std::vector<float> dx = analytic();
        const std::vector<float> dparams(model_->grads().begin(), model_->grads().end());
        GradientError err;
        std::mt19937 rng(3);
        auto probe = [&](std::span<float> values, std::span<const float> grads,
                         const std::string& what) {
            const std::size_t n = values.size();
            const std::size_t count = std::min<std::size_t>(n, std::size_t(samples));
            for (std::size_t k = 0; k < count; ++k) {
                const std::size_t i = count == n ? k : std::size_t(rng() % n);
                const float saved = values[i];
                const double centre = loss();
                values[i] = saved + float(h);
                const double plus = loss();
                values[i] = saved - float(h);
                const double minus = loss();
                values[i] = saved;
                const double right = (plus - centre) / h, left = (centre - minus) / h;
                if (std::abs(right - left) >
                    0.5 * kink_tolerance * std::max({1.0, std::abs(right), std::abs(left)})) {
                    ++err.skipped_at_kinks;
                    continue;
                }
                ++err.checked;
                const double numeric = (plus - minus) / (2 * h);
                const double e = std::abs(numeric - grads[i]) /
                                 std::max({1.0, std::abs(numeric), std::abs(double(grads[i]))});
                if (e > err.worst) {
                    err.worst = e;
                    err.where = what + "[" + std::to_string(i) + "]: numeric " +
                                std::to_string(numeric) + ", analytic " + std::to_string(grads[i]);
                }
            }
        };
        probe(x_, dx, "input");
        probe(model_->params(), dparams, "param");
        return err;
    }

  private:
    cpu::CpuBackend backend_;
    Shape input_;
    nn::Sequential* root_ = nullptr;
    std::unique_ptr<nn::Model> model_;
    std::vector<float> x_, r_;
    comm::Communicator* sync_bn_ = nullptr;
};

}  // namespace scalelab::testing
