#include "nn/residual.h"

namespace scalelab::nn {

Residual::Residual(std::string name, std::unique_ptr<Sequential> body,
                   std::unique_ptr<Sequential> shortcut)
    : name_(std::move(name)), body_(std::move(body)), shortcut_(std::move(shortcut)) {}

double Residual::forward_flops(const Shape& x) const {
    return body_->forward_flops(x) + (shortcut_ ? shortcut_->forward_flops(x) : 0.0);
}

void Residual::declare(Declarations& out) {
    // Backward runs the body first, then the shortcut; the Model lays gradients out in the
    // reverse of declaration order, so declaring the shortcut first keeps them in backward order.
    if (shortcut_)
        shortcut_->declare(out);
    body_->declare(out);
}

Tensor Residual::forward(const Tensor& x, const Context& ctx) {
    const Tensor body = body_->forward(x, ctx);
    const Tensor skip = shortcut_ ? shortcut_->forward(x, ctx) : x;
    auto& join = join_.get(x.shape(), [&] { return ctx.backend.add(body.desc, skip.desc); });
    return join.forward(body, skip);
}

Tensor Residual::backward(const Tensor& dy, const Context& ctx, bool want_dx) {
    // dL/d(body) = dL/d(skip) = dy; the join hands it to the skip branch in that branch's layout.
    const Tensor d_skip = join_.last().gradient_for_b(dy);
    const Tensor dx_body = body_->backward(dy, ctx, want_dx);
    const Tensor dx_skip = shortcut_ ? shortcut_->backward(d_skip, ctx, want_dx) : d_skip;
    if (!want_dx)
        return Tensor{};
    // dx = dx_body + dx_skip, both in x's layout (each branch returns its input's layout).
    auto& sum =
        input_grads_.get(dy.shape(), [&] { return ctx.backend.add(dx_body.desc, dx_skip.desc); });
    return sum.forward(dx_body, dx_skip);
}

}  // namespace scalelab::nn
