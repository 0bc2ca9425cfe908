#include "backend/cpu/dnnl_util.h"

namespace scalelab::cpu {

using dnnl::memory;

bool DnnlLayout::same_as(const Layout& other) const {
    const auto* o = dynamic_cast<const DnnlLayout*>(&other);
    return o != nullptr && o->md_ == md_;
}

std::string DnnlLayout::name() const {
    const auto& blk = md_.data.format_desc.blocking;
    std::string out = "blocked";
    for (int i = 0; i < blk.inner_nblks; ++i)
        out += "/" + std::to_string(blk.inner_idxs[i]) + ":" + std::to_string(blk.inner_blks[i]);
    return out;
}

memory::dims dims_of(const Shape& s) {
    return {s.n, s.c, s.h, s.w};
}

memory::desc plain_md(const Shape& s) {
    return memory::desc(dims_of(s), memory::data_type::f32, memory::format_tag::nchw);
}

memory::desc any_md(const Shape& s) {
    return memory::desc(dims_of(s), memory::data_type::f32, memory::format_tag::any);
}

memory::desc md_of(const TensorDesc& t) {
    if (t.plain())
        return plain_md(t.shape);
    return static_cast<const DnnlLayout&>(*t.layout).md();
}

TensorDesc desc_of(const Shape& s, const memory::desc& md) {
    if (md == plain_md(s))
        return TensorDesc{s, nullptr};
    return TensorDesc{s, std::make_shared<DnnlLayout>(md)};
}

Shape shape_of(const memory::desc& md) {
    const auto d = md.dims();
    return Shape{int(d[0]), int(d[1]), d.size() > 2 ? int(d[2]) : 1, d.size() > 3 ? int(d[3]) : 1};
}

Reorder::Reorder(const memory::desc& from, const memory::desc& to, const DnnlContext& ctx)
    : needed_(from != to) {
    if (needed_)
        prim_ = dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, from, ctx.engine, to));
}

void Reorder::run(const DnnlContext& ctx, memory from, memory to) const {
    prim_.execute(ctx.stream, from, to);
}

}  // namespace scalelab::cpu
