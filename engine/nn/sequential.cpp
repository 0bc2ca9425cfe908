#include "nn/sequential.h"

namespace scalelab::nn {

Sequential& Sequential::add(std::unique_ptr<Layer> layer) {
    layers_.push_back(std::move(layer));
    return *this;
}

Shape Sequential::output_shape(const Shape& x) const {
    Shape s = x;
    for (const auto& l : layers_)
        s = l->output_shape(s);
    return s;
}

double Sequential::forward_flops(const Shape& x) const {
    double flops = 0;
    Shape s = x;
    for (const auto& l : layers_) {
        flops += l->forward_flops(s);
        s = l->output_shape(s);
    }
    return flops;
}

void Sequential::declare(Declarations& out) {
    for (auto& l : layers_)
        l->declare(out);
}

Tensor Sequential::forward(const Tensor& x, const Context& ctx) {
    Tensor t = x;
    for (auto& l : layers_)
        t = l->forward(t, ctx);
    return t;
}

Tensor Sequential::backward(const Tensor& dy, const Context& ctx, bool want_dx) {
    Tensor g = dy;
    for (std::size_t i = layers_.size(); i-- > 0;)
        g = layers_[i]->backward(g, ctx, i > 0 || want_dx);
    return g;
}

}  // namespace scalelab::nn
