#include "cli/train_options.h"

#include <QFile>

#include <functional>
#include <sstream>

#include "cli/flag_parser.h"
#include "cli/flag_values.h"
#include "cli/log_setup.h"
#include "data/load.h"
#include "error.h"
#include "run_spec_json.h"

namespace scalelab::cli {

namespace {

// Applies one flag's value; returns what is wrong with it, or "" when it was applied.
using Apply = std::function<std::string(const std::string& value, TrainOptions&)>;

struct TrainFlag {
    Flag flag;
    Apply apply;  // empty for --config and --help, which are handled before the others
};

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

std::string expects(const std::string& name, const std::string& what, const std::string& got) {
    return "--" + name + " expects " + what + ", got '" + got + "'";
}

TrainFlag int_flag(std::string name, std::string help, std::string section, int RunSpec::*field) {
    help += " (default " + std::to_string(RunSpec{}.*field) + ")";
    return {{name, "N", help, section},
            [name, field](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_int(value);
                if (!parsed)
                    return expects(name, "a whole number", value);
                options.spec.*field = *parsed;
                return {};
            }};
}

TrainFlag double_flag(std::string name, std::string help, std::string section,
                      double RunSpec::*field) {
    help += " (default " + number_text(RunSpec{}.*field) + ")";
    return {{name, "X", help, section},
            [name, field](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_double(value);
                if (!parsed)
                    return expects(name, "a number", value);
                options.spec.*field = *parsed;
                return {};
            }};
}

TrainFlag string_flag(std::string name, std::string value_name, std::string help,
                      std::string section, std::string RunSpec::*field) {
    return {{name, value_name, help, section},
            [field](const std::string& value, TrainOptions& options) -> std::string {
                options.spec.*field = value;
                return {};
            }};
}

TrainFlag switch_flag(std::string name, std::string help, std::string section, bool RunSpec::*field,
                      bool value_when_given) {
    return {{name, "", help, section},
            [field, value_when_given](const std::string&, TrainOptions& options) -> std::string {
                options.spec.*field = value_when_given;
                return {};
            }};
}

TrainFlag warmup_flag(std::string name, std::string help, WarmupUnit unit) {
    return {{name, unit == WarmupUnit::Epochs ? "X" : "N", help, "Learning-rate schedule"},
            [name, unit](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_double(value);
                if (!parsed)
                    return expects(name, "a number", value);
                options.spec.warmup = *parsed;
                options.spec.warmup_unit = unit;
                return {};
            }};
}

const std::vector<TrainFlag>& train_flags() {
    static const std::vector<TrainFlag> flags = [] {
        const RunSpec defaults;
        const std::string model = "Model", data = "Data", length = "Length and batch",
                          parallel = "Data parallelism (DDP)", optimiser = "Optimiser (SGD)",
                          schedule = "Learning-rate schedule",
                          machine = "Reproducibility and machine", stop = "Early stop",
                          io = "Input and output";
        return std::vector<TrainFlag>{
            string_flag("model", "NAME",
                        join(model_names(), "|") + " (default " + defaults.model + ")", model,
                        &RunSpec::model),
            int_flag("width", "widening factor k of wrn", model, &RunSpec::width),
            string_flag("dataset", "NAME",
                        join(dataset_names(), "|") + " (default " + defaults.dataset + ")", data,
                        &RunSpec::dataset),
            string_flag("data", "DIR",
                        "the dataset's folder (default for fashion-mnist: " +
                            data::default_data_dir("fashion-mnist") + ")",
                        data, &RunSpec::data_dir),
            int_flag("synthetic-train", "synthetic training images", data,
                     &RunSpec::synthetic_train),
            int_flag("synthetic-test", "synthetic test images", data, &RunSpec::synthetic_test),
            int_flag("synthetic-channels", "synthetic image channels, 1 or 3", data,
                     &RunSpec::synthetic_channels),
            int_flag("synthetic-size", "synthetic image side, a multiple of 4", data,
                     &RunSpec::synthetic_size),
            switch_flag("augment", "random crop (padding 4) and horizontal flip", data,
                        &RunSpec::augment, true),
            int_flag("epochs", "epochs to train", length, &RunSpec::epochs),
            int_flag("batch", "images per step (per micro-batch) on each device", length,
                     &RunSpec::batch),
            {{"global-batch", "G",
              "G images per step in all, instead of --batch: batch = G / (devices x accumulation)",
              length},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 const auto parsed = parse_int(value);
                 if (!parsed || *parsed < 1)
                     return expects("global-batch", "a positive whole number", value);
                 options.global_batch = *parsed;
                 return {};
             }},
            int_flag("devices",
                     "CPU devices, 1 to " + std::to_string(max_cpu_devices) +
                         ": one worker thread and model replica each",
                     parallel, &RunSpec::devices),
            int_flag("accumulation", "micro-batches per step, no all-reduce until the last",
                     parallel, &RunSpec::accumulation),
            double_flag("bucket-mb", "gradient all-reduce bucket cap in MB, as DDP's bucket_cap_mb",
                        parallel, &RunSpec::bucket_mb),
            double_flag("first-bucket-mb", "cap of the first bucket (the last layers' gradients)",
                        parallel, &RunSpec::first_bucket_mb),
            switch_flag("no-overlap",
                        "all-reduce after backward, not during it (to see the difference)",
                        parallel, &RunSpec::overlap, false),
            switch_flag("sync-bn", "batch-norm statistics over the global batch, not per device",
                        parallel, &RunSpec::sync_bn, true),
            double_flag("lr", "learning rate", optimiser, &RunSpec::lr),
            double_flag("momentum", "momentum, in [0, 1)", optimiser, &RunSpec::momentum),
            switch_flag("nesterov", "Nesterov momentum", optimiser, &RunSpec::nesterov, true),
            double_flag("weight-decay", "L2 weight decay", optimiser, &RunSpec::weight_decay),
            switch_flag("no-decay-norm-bias", "no weight decay on batch-norm and bias parameters",
                        optimiser, &RunSpec::decay_norm_and_bias, false),
            double_flag("label-smoothing", "label smoothing, in [0, 1)", optimiser,
                        &RunSpec::label_smoothing),
            {{"schedule", "NAME",
              "constant|step|multistep|cosine (default " +
                  std::string(to_string(defaults.schedule)) + ")",
              schedule},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 const auto parsed = parse_schedule(value);
                 if (!parsed)
                     return expects("schedule", "constant|step|multistep|cosine", value);
                 options.spec.schedule = *parsed;
                 return {};
             }},
            double_flag("gamma", "decay factor of step and multistep", schedule, &RunSpec::gamma),
            int_flag("step-epochs", "step: decay every N epochs", schedule, &RunSpec::step_epochs),
            {{"milestones", "E1,E2", "multistep: decay at these epochs, e.g. 30,60", schedule},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 const auto parsed = parse_int_list(value);
                 if (!parsed)
                     return expects("milestones", "whole numbers like 30,60", value);
                 options.spec.milestones = *parsed;
                 return {};
             }},
            double_flag("min-lr", "cosine: the learning rate it anneals to", schedule,
                        &RunSpec::min_lr),
            warmup_flag("warmup-epochs", "linear warm-up over X epochs (default 0: none)",
                        WarmupUnit::Epochs),
            warmup_flag("warmup-steps", "linear warm-up over N steps instead", WarmupUnit::Steps),
            double_flag("warmup-start-factor", "warm-up starts at lr times this", schedule,
                        &RunSpec::warmup_start_factor),
            {{"seed", "N",
              "seed of initialisation, shuffling and augmentation (default " +
                  std::to_string(defaults.seed) + ")",
              machine},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 const auto parsed = parse_uint64(value);
                 if (!parsed)
                     return expects("seed", "a whole number from 0", value);
                 options.spec.seed = *parsed;
                 return {};
             }},
            int_flag("threads", "CPU threads per device, 0 to share all cores among the devices",
                     machine, &RunSpec::threads),
            double_flag("target-accuracy", "validation accuracy to stop at, 0 for none", stop,
                        &RunSpec::target_accuracy),
            int_flag("patience", "epochs in a row the target must hold", stop, &RunSpec::patience),
            {{"config", "FILE", "read the run spec from a JSON file first; flags override it", io},
             {}},
            {{"metrics-out", "FILE", "write step, epoch and end rows to FILE as JSON lines", io},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--metrics-out needs a file name";
                 options.metrics_out = value;
                 return {};
             }},
            {{"log-level", "LEVEL", log_level_names() + " (default info), logs go to stderr", io},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (!is_log_level(value))
                     return expects("log-level", log_level_names(), value);
                 options.log_level = value;
                 return {};
             }},
            {{"help", "", "show this help", io}, {}},
        };
    }();
    return flags;
}

std::vector<Flag> flags_only() {
    std::vector<Flag> flags;
    for (const TrainFlag& f : train_flags())
        flags.push_back(f.flag);
    return flags;
}

// The config file is the base the flags are applied on, wherever --config appears.
void read_config(const std::string& path, ParsedTrainOptions& parsed) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly)) {
        parsed.problems.push_back("config " + path + ": cannot read it (" +
                                  file.errorString().toStdString() + ")");
        return;
    }
    try {
        parsed.options.spec = run_spec_from_json(file.readAll());
    } catch (const Error& error) {
        std::istringstream lines(error.what());
        for (std::string line; std::getline(lines, line);)
            parsed.problems.push_back("config " + path + ": " + line);
    }
}

// --global-batch G: batch = G / (devices * accumulation), once both are known (from the config
// file or flags, in any order). A G that does not divide is a problem naming the nearest
// global batches that do.
void apply_global_batch(ParsedTrainOptions& parsed) {
    const TrainOptions& options = parsed.options;
    const long long global = options.global_batch;
    const long long devices = options.spec.devices, accumulation = options.spec.accumulation;
    if (global < 1 || devices < 1 || accumulation < 1)
        return;  // not given, or validate() reports the devices or accumulation
    const long long per_step = devices * accumulation;
    const std::string split =
        accumulation == 1 ? std::to_string(devices) + " devices"
                          : std::to_string(devices) + " devices x " + std::to_string(accumulation) +
                                " micro-batches = " + std::to_string(per_step);
    if (global % per_step == 0) {
        parsed.options.spec.batch = int(global / per_step);
        return;
    }
    const long long below = global / per_step * per_step, above = below + per_step;
    std::string suggestion = "--global-batch " + std::to_string(above) + " (batch " +
                             std::to_string(above / per_step) + " per device)";
    if (below > 0)
        suggestion = "--global-batch " + std::to_string(below) + " (batch " +
                     std::to_string(below / per_step) + " per device) or " + suggestion;
    parsed.problems.push_back("--global-batch " + std::to_string(global) + " is not divisible by " +
                              split + ": use " + suggestion);
}

}  // namespace

ParsedTrainOptions parse_train_options(const std::vector<std::string>& args) {
    const ParsedFlags flags = parse_flags(args, flags_only());
    ParsedTrainOptions parsed;
    parsed.problems = flags.problems;
    if (flags.has("help")) {
        parsed.options.help = true;
        return parsed;
    }
    if (flags.has("warmup-epochs") && flags.has("warmup-steps"))
        parsed.problems.push_back("give --warmup-epochs or --warmup-steps, not both");
    const bool both_batches = flags.has("batch") && flags.has("global-batch");
    if (both_batches)
        parsed.problems.push_back(
            "give --batch (images per device) or --global-batch (images over all devices), "
            "not both");

    for (const GivenFlag& given : flags.given)
        if (given.name == "config")
            read_config(given.value, parsed);
    for (const GivenFlag& given : flags.given) {
        for (const TrainFlag& f : train_flags()) {
            if (f.flag.name != given.name || !f.apply)
                continue;
            if (std::string problem = f.apply(given.value, parsed.options); !problem.empty())
                parsed.problems.push_back(std::move(problem));
        }
    }
    if (!both_batches)
        apply_global_batch(parsed);
    return parsed;
}

std::string train_help() {
    return format_help(
        "scalelab-cli train [flags]",
        "Trains one model on one or more CPU devices (data parallel, with DDP's semantics) and\n"
        "prints a summary line per epoch (and a progress bar on a terminal). --batch is per\n"
        "device; the global batch is devices x batch x accumulation.",
        flags_only(),
        "Examples:\n"
        "  scalelab-cli train --model cnn --epochs 2 --batch 128 --lr 0.05\n"
        "  scalelab-cli train --devices 2 --global-batch 256 --sync-bn\n"
        "  scalelab-cli train --dataset synthetic --model mlp --metrics-out run.jsonl\n"
        "  scalelab-cli train --config run.json --epochs 5\n"
        "\n"
        "Exit codes: 0 finished or reached the target, 1 failed, 2 bad input (nothing run),\n"
        "3 diverged (loss NaN or infinite), 130 cancelled (Ctrl-C).");
}

}  // namespace scalelab::cli
