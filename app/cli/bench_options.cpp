#include "cli/bench_options.h"

#include <optional>

#include "cli/flag_parser.h"
#include "cli/flag_readers.h"
#include "cli/flag_values.h"
#include "train/run_spec.h"

namespace scalelab::cli {

namespace {

const std::vector<Flag>& bench_flags() {
    static const std::vector<Flag> flags = [] {
        const ThroughputConfig defaults;
        const std::string what = "What to measure", how = "How to measure";
        return with_bench_output_flags({
            {"model", "M1,M2", "models, comma-separated (default cnn)", what},
            {"width", "K",
             "widening factor k of wrn (default " + std::to_string(defaults.width) + ")", what},
            {"batch", "B1,B2", "batch sizes per device, comma-separated (default 128)", what},
            {"threads", "T1,T2", "CPU threads per device, comma-separated (default 1)", what},
            {"device", "NAME", "cpu|gpu: CPU devices, or the first --devices GPUs (default cpu)",
             what},
            {"devices", "D1,D2", "device counts, comma-separated (default 1)", what},
            {"channels", "N",
             "image channels, 1 or 3 (default " + std::to_string(defaults.channels) + ")", what},
            {"size", "N",
             "image side, a multiple of 4 (default " + std::to_string(defaults.image_size) + ")",
             what},
            {"warmup-steps", "N",
             "untimed steps first (default " + std::to_string(defaults.warmup_steps) + ")", how},
            {"windows", "N",
             "timed windows; the median is reported (default " + std::to_string(defaults.windows) +
                 ")",
             how},
            {"images", "N",
             "images per window (default " + std::to_string(defaults.images_per_window) + ")", how},
        });
    }();
    return flags;
}

std::string apply_bench_flag(const GivenFlag& given, BenchTrainOptions& options) {
    ThroughputConfig& base = options.base;
    if (given.name == "model") {
        options.models = split_list(given.value);
        if (options.models.empty())
            return "--model needs at least one model name";
        return {};
    }
    if (given.name == "width")
        return read_positive(given, base.width);
    if (given.name == "batch")
        return read_positive_list(given, options.batches);
    if (given.name == "threads")
        return read_positive_list(given, options.threads);
    if (given.name == "devices") {
        std::vector<int> devices;
        if (std::string problem = read_positive_list(given, devices); !problem.empty())
            return problem;
        for (int d : devices)
            if (d > max_cpu_devices)
                return expects(
                    "devices",
                    "device counts from 1 to " + std::to_string(max_cpu_devices) + " CPU devices",
                    given.value);
        options.devices = devices;
        return {};
    }
    if (given.name == "device") {
        const std::optional<DeviceKind> device = EnumNames<DeviceKind>::table.parse(given.value);
        if (!device)
            return expects("device", "cpu or gpu", given.value);
        options.device = *device;
        return {};
    }
    if (given.name == "channels")
        return read_positive(given, base.channels);
    if (given.name == "size")
        return read_positive(given, base.image_size);
    if (given.name == "warmup-steps")
        return read_positive(given, base.warmup_steps);
    if (given.name == "windows")
        return read_positive(given, base.windows);
    if (given.name == "images")
        return read_positive(given, base.images_per_window);
    return {};
}

}  // namespace

ParsedBenchTrainOptions parse_bench_train_options(const std::vector<std::string>& args) {
    return parse_bench_options<ParsedBenchTrainOptions>(args, bench_flags(), apply_bench_flag);
}

std::string bench_help() {
    return format_help(
        "scalelab-cli bench train [flags]",
        "Measures training throughput: the training step of a run (forward, loss, backward,\n"
        "gradient all-reduce between devices, SGD update) on in-memory batches, timed in\n"
        "windows after a warm-up. Prints images/s over all devices (median, min-max over the\n"
        "windows) and the GFLOP/s that implies, one row per combination of --model, --batch,\n"
        "--threads and --devices. --batch and --threads are per device: --devices 2 --threads 1\n"
        "uses two cores. With --device gpu, --devices N measures on the first N GPUs (NCCL\n"
        "between them; --threads does not apply), in float32 with TF32 off, as PyTorch's eager\n"
        "mode with allow_tf32 off: scripts/gpu/check.sh compares the two. After a sweep of\n"
        "batches it warns (on stderr) wherever a larger batch trained more than 20% fewer\n"
        "images/s than a smaller one with the same model, threads and devices.",
        bench_flags(),
        "Examples:\n"
        "  scalelab-cli bench train --model cnn --batch 128 --threads 1\n"
        "  scalelab-cli bench train --model cnn --batch 64,256 --threads 1 --devices 1,2\n"
        "  scalelab-cli bench train --model cnn,resnet8 --batch 32,128,512 --threads 1,2 --json\n"
        "  scalelab-cli bench train --device gpu --model wrn --width 10 --batch 256 --devices 1");
}

}  // namespace scalelab::cli
