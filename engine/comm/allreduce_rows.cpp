#include "comm/allreduce_rows.h"

#include <algorithm>
#include <string>

#include "error.h"

namespace scalelab::comm {

namespace {

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

void check_allreduce_arguments(int devices, const std::vector<std::size_t>& sizes_bytes,
                               int iterations) {
    if (devices < 1 || devices > allreduce_max_devices)
        throw Error(ErrorKind::InvalidSpec, "the all-reduce benchmark runs on 1 to " +
                                                std::to_string(allreduce_max_devices) +
                                                " devices (got " + std::to_string(devices) + ")");
    if (iterations < 1)
        throw Error(ErrorKind::InvalidSpec,
                    "the all-reduce benchmark needs at least 1 timed "
                    "iteration (got " +
                        std::to_string(iterations) + ")");
    for (std::size_t bytes : sizes_bytes)
        if (bytes < sizeof(float))
            throw Error(ErrorKind::InvalidSpec,
                        "an all-reduce size must be at least " + std::to_string(sizeof(float)) +
                            " bytes, one float (got " + std::to_string(bytes) + ")");
}

AllReduceRow allreduce_row(int devices, std::size_t bytes,
                           const std::vector<std::vector<double>>& seconds) {
    std::vector<double> slowest(seconds.empty() ? 0 : seconds.front().size(), 0.0);
    for (const std::vector<double>& rank_seconds : seconds)
        for (std::size_t it = 0; it < slowest.size(); ++it)
            slowest[it] = std::max(slowest[it], rank_seconds[it]);
    const double time_s = slowest.empty() ? 0.0 : median(slowest);

    AllReduceRow row;
    row.devices = devices;
    row.bytes = bytes;
    row.time_ms = time_s * 1e3;
    row.algbw_GBs = time_s > 0 ? static_cast<double>(bytes) / time_s / 1e9 : 0.0;
    // A ring all-reduce moves 2 (N - 1) / N of the buffer through each rank's link.
    row.busbw_GBs = row.algbw_GBs * 2.0 * (devices - 1) / devices;
    return row;
}

}  // namespace scalelab::comm
