#include "nn/pool.h"

namespace scalelab::nn {

std::string Pool::name() const {
    const std::string kind = cfg_.kind == PoolKind::Max ? "max pool" : "average pool";
    if (cfg_.kernel == 0)
        return name_ + ": global " + kind;
    return name_ + ": " + kind + " " + std::to_string(cfg_.kernel) + "x" +
           std::to_string(cfg_.kernel);
}

Shape Pool::output_shape(const Shape& x) const {
    if (cfg_.kernel == 0)
        return Shape{x.n, x.c, 1, 1};
    return Shape{x.n, x.c, (x.h + 2 * cfg_.padding - cfg_.kernel) / cfg_.stride + 1,
                 (x.w + 2 * cfg_.padding - cfg_.kernel) / cfg_.stride + 1};
}

}  // namespace scalelab::nn
