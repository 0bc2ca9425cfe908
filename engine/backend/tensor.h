#pragma once

#include <compare>
#include <cstddef>
#include <memory>
#include <string>

namespace scalelab {

// The logical shape of an activation: batch, channels, height, width. A flat feature vector
// is (n, features, 1, 1).
struct Shape {
    int n = 0;
    int c = 0;
    int h = 1;
    int w = 1;

    std::size_t numel() const { return std::size_t(n) * c * h * w; }
    std::size_t per_sample() const { return std::size_t(c) * h * w; }
    std::string str() const;
    auto operator<=>(const Shape&) const = default;
};

// How a backend places a tensor in memory. A null layout means plain NCHW, densely packed:
// every backend accepts it, and it is what the model's edges use (input batch, flatten, loss).
// Anything else (oneDNN's blocked formats, say) is opaque outside the backend that made it.
class Layout {
  public:
    virtual ~Layout() = default;
    virtual std::size_t bytes() const = 0;  // may exceed 4 * numel: blocked formats pad channels
    virtual bool same_as(const Layout& other) const = 0;
    virtual std::string name() const = 0;
};

struct TensorDesc {
    Shape shape;
    std::shared_ptr<const Layout> layout;  // null: plain NCHW

    bool plain() const { return layout == nullptr; }
    std::size_t bytes() const { return layout ? layout->bytes() : shape.numel() * sizeof(float); }
    bool same_layout(const TensorDesc& o) const {
        return shape == o.shape &&
               (layout == o.layout || (layout && o.layout && layout->same_as(*o.layout)));
    }
};

// A non-owning view of an activation or its gradient in device memory. The buffer belongs to
// the kernel that produced it and stays valid until that kernel runs again.
struct Tensor {
    TensorDesc desc;
    float* data = nullptr;

    const Shape& shape() const { return desc.shape; }
};

}  // namespace scalelab
