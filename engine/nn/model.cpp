#include "nn/model.h"

#include <random>

#include "nn/sequential.h"

namespace scalelab::nn {

Model::Model(std::unique_ptr<Layer> root, Shape input, Backend& backend, std::uint64_t seed)
    : root_(std::move(root)), input_(input) {
    Declarations decl;
    root_->declare(decl);

    std::size_t param_count = 0, state_count = 0;
    for (const auto* p : decl.parameters)
        param_count += p->size;
    for (const auto* b : decl.buffers)
        state_count += b->size;
    params_ = backend.allocate(param_count);
    grads_ = backend.allocate(param_count);
    state_ = backend.allocate(state_count);

    // Values are drawn in declaration order with a 32-bit Mersenne Twister (its sequence is
    // fixed by the standard) and mapped to floats by hand (std's distributions are not).
    std::mt19937 rng(std::uint32_t(seed * 2654435761u + 12345u));
    std::vector<float> host_params(param_count), host_state(state_count);
    std::vector<std::size_t> offsets(decl.parameters.size());
    std::size_t end = param_count;
    for (std::size_t i = 0; i < decl.parameters.size(); ++i) {
        // Backward order: the first declared parameter sits at the end of the buffer.
        Parameter& p = *decl.parameters[i];
        end -= p.size;
        offsets[i] = end;
        for (std::size_t j = 0; j < p.size; ++j) {
            const float u = float(rng() >> 8) * (1.0f / 16777216.0f);  // [0, 1)
            host_params[end + j] = p.init_bound > 0 ? (2 * u - 1) * p.init_bound : p.init_value;
        }
    }
    for (std::size_t i = decl.parameters.size(); i-- > 0;) {
        Parameter& p = *decl.parameters[i];
        p.value = params_.data() + offsets[i];
        p.grad = grads_.data() + offsets[i];
        segments_.push_back(optim::ParamSegment{p.name, p.role, offsets[i], p.size});
    }
    for (std::size_t i = 0; i < decl.parameters.size(); ++i) {
        const Parameter& p = *decl.parameters[i];
        named_tensors_.push_back({p.name, p.shape, false, offsets[i], p.size});
    }
    std::size_t state_offset = 0;
    for (auto* b : decl.buffers) {
        named_tensors_.push_back({b->name, b->shape, true, state_offset, b->size});
        b->value = state_.data() + state_offset;
        std::fill_n(host_state.begin() + std::ptrdiff_t(state_offset), b->size, b->init_value);
        state_offset += b->size;
    }
    backend.upload(host_params, params_.data());
    backend.upload(host_state, state_.data());
}

double Model::forward_flops_per_sample() const {
    Shape one = input_;
    one.n = 1;
    return root_->forward_flops(one);
}

namespace {

void describe(const Layer& layer, const Shape& in, int depth, std::string& out) {
    const std::string indent(std::size_t(depth) * 2, ' ');
    out += indent + layer.name() + "  -> " + layer.output_shape(in).str() + "\n";
    if (const auto* seq = dynamic_cast<const Sequential*>(&layer)) {
        Shape s = in;
        for (const auto& child : seq->layers()) {
            describe(*child, s, depth + 1, out);
            s = child->output_shape(s);
        }
    }
}

}  // namespace

std::string Model::summary() const {
    std::string out;
    Shape one = input_;
    one.n = 1;
    describe(*root_, one, 0, out);
    out += std::to_string(params_.size()) + " parameters, " +
           std::to_string(forward_flops_per_sample() / 1e6) + " MFLOP per image forward\n";
    return out;
}

}  // namespace scalelab::nn
