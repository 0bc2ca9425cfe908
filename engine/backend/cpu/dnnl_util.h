#pragma once

// Glue between ScaleLab's tensors and oneDNN's memory descriptors, shared by the CPU kernels.

#include <dnnl.hpp>
#include <string>
#include <unordered_map>

#include "backend/tensor.h"

namespace scalelab::cpu {

// One device's oneDNN engine and stream. Both belong to the worker thread that made them.
struct DnnlContext {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
};

// A oneDNN memory descriptor as a ScaleLab layout: how the CPU backend marks a blocked tensor.
class DnnlLayout final : public Layout {
  public:
    explicit DnnlLayout(dnnl::memory::desc md) : md_(std::move(md)) {}
    const dnnl::memory::desc& md() const { return md_; }
    std::size_t bytes() const override { return md_.get_size(); }
    bool same_as(const Layout& other) const override;
    std::string name() const override;

  private:
    dnnl::memory::desc md_;
};

using Args = std::unordered_map<int, dnnl::memory>;

dnnl::memory::dims dims_of(const Shape& s);
dnnl::memory::desc plain_md(const Shape& s);
dnnl::memory::desc any_md(const Shape& s);
dnnl::memory::desc md_of(const TensorDesc& t);
// A plain NCHW descriptor becomes a null layout, anything else a DnnlLayout.
TensorDesc desc_of(const Shape& s, const dnnl::memory::desc& md);
Shape shape_of(const dnnl::memory::desc& md);

// A kernel-owned buffer in the layout the primitive chose; oneDNN aligns and sizes it.
inline dnnl::memory owned(const dnnl::memory::desc& md, const DnnlContext& ctx) {
    return dnnl::memory(md, ctx.engine);
}
// A memory object over a buffer owned elsewhere; its pointer is set before each use.
inline dnnl::memory borrowed(const dnnl::memory::desc& md, const DnnlContext& ctx) {
    return dnnl::memory(md, ctx.engine, DNNL_MEMORY_NONE);
}
inline float* data_of(const dnnl::memory& m) {
    return static_cast<float*>(m.get_data_handle());
}
inline void point(dnnl::memory& m, const float* p) {
    m.set_data_handle(const_cast<float*>(p));
}

// A kernel's buffer as a tensor; the descriptor is worked out once, when the kernel is made
// (desc_of compares descriptors and allocates: not something to do every step).
inline Tensor view(const TensorDesc& desc, const dnnl::memory& m) {
    return Tensor{desc, data_of(m)};
}

// Copies src into dst's layout when the two differ: the one place where layouts change.
class Reorder {
  public:
    Reorder() = default;
    Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to, const DnnlContext& ctx);
    bool needed() const { return needed_; }
    void run(const DnnlContext& ctx, dnnl::memory from, dnnl::memory to) const;

  private:
    bool needed_ = false;
    dnnl::reorder prim_;
};

}  // namespace scalelab::cpu
