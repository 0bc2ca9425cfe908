#include "cli/throughput_drops.h"

#include <spdlog/fmt/fmt.h>

namespace scalelab::cli {

namespace {

bool same_setting(const ThroughputPoint& a, const ThroughputPoint& b) {
    return a.model == b.model && a.threads == b.threads && a.devices == b.devices;
}

// The point of a smaller batch than `point`'s, in its setting, with the most images/s; null if
// there is none.
const ThroughputPoint* best_smaller_batch(const std::vector<ThroughputPoint>& points,
                                          const ThroughputPoint& point) {
    const ThroughputPoint* best = nullptr;
    for (const ThroughputPoint& other : points)
        if (same_setting(other, point) && other.batch < point.batch &&
            (best == nullptr || other.images_per_s > best->images_per_s))
            best = &other;
    return best;
}

}  // namespace

std::vector<std::string> throughput_drops(const std::vector<ThroughputPoint>& points) {
    std::vector<std::string> messages;
    for (const ThroughputPoint& point : points) {
        const ThroughputPoint* best = best_smaller_batch(points, point);
        if (best == nullptr ||
            point.images_per_s >= (1 - throughput_drop_warning) * best->images_per_s)
            continue;
        messages.push_back(fmt::format(
            "{} on {} device(s) of {} thread(s): batch {} trains {:.0f} images/s, {:.0f}% fewer "
            "than batch {} ({:.0f}); a larger batch should not be this much slower. Measure both "
            "again on an idle machine; if the fall stays, a kernel changes method at this batch "
            "or the batch's activations no longer fit the cache (on CPU devices, DNNL_VERBOSE=1 "
            "shows which kernels run and how long each takes)",
            point.model, point.devices, point.threads, point.batch, point.images_per_s,
            100 * (1 - point.images_per_s / best->images_per_s), best->batch, best->images_per_s));
    }
    return messages;
}

}  // namespace scalelab::cli
