#include "cli/train_options.h"

#include <QDir>
#include <QFile>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "cli/flag_parser.h"
#include "cli/flag_readers.h"
#include "cli/flag_values.h"
#include "cli/log_setup.h"
#include "data/load.h"
#include "error.h"
#include "run_labels.h"
#include "run_spec_json.h"
#include "run_store.h"
#include "train/run_spec.h"

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

std::string targets_text(const std::vector<double>& targets) {
    std::string out;
    for (double t : targets)
        out += (out.empty() ? "" : ",") + number_text(t);
    return out.empty() ? "none" : out;
}

// The values a number flag accepts. The default accepts every number: most ranges of numbers
// with a fraction are left to RunSpec::validate(), which says them; the large-batch flags check
// theirs here, so that the message names the flag. Whole-number flags take their range from
// whole_range().
struct Bounds {
    double low = -std::numeric_limits<double>::infinity();
    double high = std::numeric_limits<double>::infinity();
    bool low_open = false, high_open = false;

    bool contains(double v) const {
        return (low_open ? v > low : v >= low) && (high_open ? v < high : v <= high);
    }
    // " in [0, 1)", " of at least 1", "" when unbounded.
    std::string text() const {
        const bool has_low = std::isfinite(low), has_high = std::isfinite(high);
        if (has_low && has_high)
            return std::string(" in ") + (low_open ? "(" : "[") + number_text(low) + ", " +
                   number_text(high) + (high_open ? ")" : "]");
        if (has_low)
            return (low_open ? " above " : " of at least ") + number_text(low);
        if (has_high)
            return (high_open ? " below " : " of at most ") + number_text(high);
        return {};
    }
};

const Bounds unbounded, at_least_0{0, std::numeric_limits<double>::infinity()},
    fraction{0, 1, false, true}, open_fraction{0, 1, true, true}, above_0_to_1{0, 1, true, false};

// A whole number in the range RunSpec::validate() accepts for `field`: a value outside it (or
// too large for an int) is the flag's problem, stating the range once.
TrainFlag int_flag(std::string name, std::string help, std::string section, int RunSpec::*field) {
    help += " (default " + std::to_string(RunSpec{}.*field) + ")";
    return {{name, "N", help, section},
            [name, field](const std::string& value, TrainOptions& options) -> std::string {
                const WholeRange range = whole_range(field);
                return read_in_range({name, value}, range.min, range.max, options.spec.*field);
            }};
}

TrainFlag double_flag(std::string name, std::string help, std::string section,
                      double RunSpec::*field, Bounds bounds = unbounded) {
    help += " (default " + number_text(RunSpec{}.*field) + ")";
    return {{name, "X", help, section},
            [name, field, bounds](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_double(value);
                if (!parsed || !bounds.contains(*parsed))
                    return expects(name, "a number" + bounds.text(), value);
                options.spec.*field = *parsed;
                return {};
            }};
}

// --name 1,2,3 for a list of whole numbers (the milestones, the GPUs); `example` shows its form.
TrainFlag int_list_flag(std::string name, std::string value_name, std::string help,
                        std::string section, std::vector<int> RunSpec::*field,
                        std::string example) {
    return {{name, value_name, help, section},
            [name, field, example](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_int_list(value);
                if (!parsed)
                    return expects(name, example, value);
                options.spec.*field = *parsed;
                return {};
            }};
}

// --name a|b|c for any RunSpec enum: the choices come from its EnumNames, the help shows them and
// the default, and a value that is not one of them is a problem listing them.
template <typename Enum>
TrainFlag enum_flag(std::string name, std::string help, std::string section, Enum RunSpec::*field) {
    const std::string choices = EnumNames<Enum>::table.choices("|");
    help = choices + ": " + help + " (default " + std::string(to_string(RunSpec{}.*field)) + ")";
    return {{name, "NAME", help, section},
            [name, choices, field](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = EnumNames<Enum>::table.parse(value);
                if (!parsed)
                    return expects(name, "one of " + choices, value);
                options.spec.*field = *parsed;
                return {};
            }};
}

TrainFlag string_flag(std::string name, std::string value_name, std::string help,
                      std::string section, std::string RunSpec::*field) {
    // An empty value ("--data ''", an unset shell variable) is refused rather than taken as
    // the default: the user asked for something, and got something else.
    return {{name, value_name, help, section},
            [field, name](const std::string& value, TrainOptions& options) -> std::string {
                if (value.empty())
                    return "--" + name +
                           " needs a value, not an empty one: leave the flag out "
                           "for the default";
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
    return {{name, unit == WarmupUnit::Epochs ? "X" : "N", help, "Warm-up"},
            [name, unit](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_double(value);
                if (!parsed)
                    return expects(name, "a number", value);
                options.spec.warmup_length = *parsed;
                options.spec.warmup_unit = unit;
                return {};
            }};
}

const std::vector<TrainFlag>& train_flags() {
    static const std::vector<TrainFlag> flags = [] {
        const RunSpec defaults;
        const std::string model = "Model", data = "Data", length = "Length and batch",
                          parallel = "Data parallelism (DDP)", batch_norm = "Batch norm",
                          optimiser = "Optimiser", adaptive = "LARS, LAMB, NovoGrad and AdamW",
                          schedule = "Learning-rate schedule", warmup = "Warm-up",
                          measure = "Measurements", machine = "Reproducibility and machine",
                          stop = "Early stop", io = "Input and output", store = "Run store";
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
            int_flag("train-subset", "train on the first N training images only (0: all)", data,
                     &RunSpec::train_subset),
            int_flag("test-subset", "evaluate on the first N test images only (0: all)", data,
                     &RunSpec::test_subset),
            enum_flag(
                "augment",
                "seeded per device and epoch; crop-flip: CIFAR-10's; assessment: the course's set",
                data, &RunSpec::augment),
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
            enum_flag("device",
                      "cpu: worker threads sharing the cores; gpu: NVIDIA GPUs (scalelab-cli "
                      "devices lists them)",
                      parallel, &RunSpec::device),
            int_flag("devices",
                     "devices, 1 to " + std::to_string(max_cpu_devices) +
                         ": one worker thread and model replica each",
                     parallel, &RunSpec::devices),
            int_list_flag("gpus", "I1,I2",
                          "with --device gpu: which GPUs, one per device, e.g. 0,2 (default: the "
                          "first ones)",
                          parallel, &RunSpec::gpus, "GPU indices like 0,2"),
            switch_flag("tf32", "GPUs: TF32 tensor-core math (faster, about 3 decimal digits)",
                        parallel, &RunSpec::tf32, true),
            switch_flag("deterministic",
                        "GPUs: only algorithms that give the same bits on every run", parallel,
                        &RunSpec::deterministic, true),
            double_flag("collective-timeout-s",
                        "GPUs: seconds a collective may take before the run is stopped", parallel,
                        &RunSpec::collective_timeout_s),
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
                        batch_norm, &RunSpec::sync_bn, true),
            switch_flag("zero-init-residual",
                        "gamma 0 for the last batch norm of each residual block (identity blocks "
                        "at step 0)",
                        batch_norm, &RunSpec::zero_init_residual, true),
            int_flag("ghost-batch",
                     "ghost batch norm: statistics over virtual batches of N images, N dividing "
                     "--batch; 0 for off",
                     batch_norm, &RunSpec::ghost_batch),
            enum_flag("optimizer", "the optimiser", optimiser, &RunSpec::optimizer),
            double_flag("lr", "base learning rate, before --lr-scaling", optimiser, &RunSpec::lr),
            enum_flag("lr-scaling",
                      "effective lr = lr x rule(global batch / reference batch): 1, k or sqrt(k)",
                      optimiser, &RunSpec::lr_scaling),
            int_flag("reference-batch", "the global batch --lr is meant for", optimiser,
                     &RunSpec::reference_batch),
            double_flag("momentum", "momentum, in [0, 1)", optimiser, &RunSpec::momentum),
            switch_flag("nesterov", "Nesterov momentum", optimiser, &RunSpec::nesterov, true),
            double_flag("weight-decay", "L2 weight decay (decoupled for AdamW and NovoGrad)",
                        optimiser, &RunSpec::weight_decay),
            switch_flag("no-decay-norm-bias", "no weight decay on batch-norm and bias parameters",
                        optimiser, &RunSpec::decay_norm_and_bias, false),
            double_flag("label-smoothing", "label smoothing, in [0, 1)", optimiser,
                        &RunSpec::label_smoothing),
            double_flag("beta1", "first-moment decay (LAMB, NovoGrad, AdamW), in [0, 1)", adaptive,
                        &RunSpec::beta1, fraction),
            double_flag("beta2", "second-moment decay, in [0, 1)", adaptive, &RunSpec::beta2,
                        fraction),
            double_flag("eps", "added to the denominator, in (0, 1)", adaptive, &RunSpec::eps,
                        open_fraction),
            double_flag("trust-coefficient", "LARS eta, in (0, 1]", adaptive,
                        &RunSpec::trust_coefficient, above_0_to_1),
            switch_flag("larc", "LARS: clip the local lr to the global one (LARC)", adaptive,
                        &RunSpec::larc, true),
            double_flag("trust-clamp", "LAMB: clamp the trust ratio to [0, X], 0 for no clamp",
                        adaptive, &RunSpec::trust_clamp, at_least_0),
            switch_flag("grad-averaging", "NovoGrad: the first moment averages (1 - beta1) x g",
                        adaptive, &RunSpec::grad_averaging, true),
            switch_flag("adapt-norm-bias",
                        "layer-wise adaptation (LARS, LAMB, NovoGrad) also for batch-norm and "
                        "bias tensors",
                        adaptive, &RunSpec::adapt_norm_and_bias, true),
            enum_flag("schedule", "the lr schedule", schedule, &RunSpec::schedule),
            double_flag("gamma", "decay factor of step, multistep and exp (per epoch)", schedule,
                        &RunSpec::gamma),
            int_flag("step-epochs", "step: decay every N epochs", schedule, &RunSpec::step_epochs),
            int_list_flag("milestones", "E1,E2", "multistep: decay at these epochs, e.g. 30,60",
                          schedule, &RunSpec::milestones, "whole numbers like 30,60"),
            double_flag("min-lr", "cosine: the learning rate it anneals to", schedule,
                        &RunSpec::min_lr),
            double_flag("poly-power", "poly: lr x (1 - t/T)^X, X in (0, 10]", schedule,
                        &RunSpec::poly_power, Bounds{0, 10, true, false}),
            enum_flag("warmup", "ramp per step, ramp per epoch, or start factor then a jump",
                      warmup, &RunSpec::warmup),
            warmup_flag("warmup-epochs", "warm-up over X epochs (default 0: none)",
                        WarmupUnit::Epochs),
            warmup_flag("warmup-steps", "warm-up over N steps instead", WarmupUnit::Steps),
            double_flag("warmup-start-factor", "warm-up starts at lr times this", warmup,
                        &RunSpec::warmup_start_factor),
            {{"targets", "A1,A2",
              "validation accuracies in (0, 1] whose time to reach is recorded (default " +
                  targets_text(defaults.targets) + ")",
              measure},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 const auto parsed = parse_double_list(value);
                 if (!parsed || !std::all_of(parsed->begin(), parsed->end(),
                                             [](double t) { return t > 0 && t <= 1; }))
                     return expects("targets", "accuracies in (0, 1] like 0.85,0.9", value);
                 options.spec.targets = *parsed;
                 return {};
             }},
            double_flag("noise-scale-beta",
                        "decay of the gradient noise scale's moving averages, in [0, 1)", measure,
                        &RunSpec::noise_scale_beta, fraction),
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
            int_flag("threads",
                     "CPU threads per device: a CPU device is this many cores, so that 1 and N "
                     "devices compare fairly; 0 shares all cores among the devices",
                     machine, &RunSpec::threads),
            double_flag("target-accuracy", "validation accuracy to stop at, 0 for none", stop,
                        &RunSpec::target_accuracy),
            int_flag("patience", "epochs in a row the target must hold", stop, &RunSpec::patience),
            {{"store", "FILE",
              "the SQLite run store to record the run in (default " +
                  QDir::toNativeSeparators(RunStore::default_path()).toStdString() + ")",
              store},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--store needs a file name";
                 options.store = value;
                 return {};
             }},
            {{"no-store", "", "do not record the run", store},
             [](const std::string&, TrainOptions& options) -> std::string {
                 options.no_store = true;
                 return {};
             }},
            {{"name", "NAME", "the run's name in the store (default: run <its id>)", store},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--name needs a name";
                 if (const QString problem = run_name_problem(QString::fromStdString(value));
                     !problem.isEmpty())
                     return "--name: " + problem.toStdString();
                 options.name = value;
                 return {};
             }},
            {{"tag", "TAG", "a tag for the run in the store; repeat for more tags", store, true},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--tag needs a tag";
                 options.tags.push_back(value);
                 return {};
             }},
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
    if (flags.has("no-store") && (flags.has("store") || flags.has("name") || flags.has("tag")))
        parsed.problems.push_back(
            "--store, --name and --tag are about recording the run: drop them or --no-store");
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
    QStringList tags;
    for (const std::string& tag : parsed.options.tags)
        tags.append(QString::fromStdString(tag));
    if (const QString problem = tags_problem(tags); !problem.isEmpty())
        parsed.problems.push_back("--tag: " + problem.toStdString());
    return parsed;
}

std::string train_help() {
    return format_help(
        "scalelab-cli train [flags]",
        "Trains one model on one or more CPU devices or GPUs (data parallel, with DDP's\n"
        "semantics: one worker thread per device; NCCL between GPUs) and\n"
        "prints a summary line per epoch (and a progress bar on a terminal). --batch is per\n"
        "device; the global batch is devices x batch x accumulation. The run is recorded in\n"
        "the run store as it trains (see 'scalelab-cli runs --help'), where the desktop app\n"
        "shows it too.",
        flags_only(),
        "Examples:\n"
        "  scalelab-cli train --model cnn --epochs 2 --batch 128 --lr 0.05\n"
        "  scalelab-cli train --devices 2 --global-batch 256 --sync-bn\n"
        "  scalelab-cli train --device gpu --devices 2 --model wrn --batch 256\n"
        "  scalelab-cli train --devices 4 --batch 128 --lr 0.1 --lr-scaling linear \\\n"
        "      --warmup gradual --warmup-epochs 2 --optimizer lars\n"
        "  scalelab-cli train --dataset synthetic --model mlp --metrics-out run.jsonl\n"
        "  scalelab-cli train --config run.json --epochs 5\n"
        "  scalelab-cli train --name baseline --tag sweep-1 --store lab.sqlite\n"
        "\n"
        "Exit codes: 0 finished or reached the target, 1 failed, 2 bad input (nothing run),\n"
        "3 diverged (loss NaN or infinite), 130 cancelled (Ctrl-C), 143 cancelled by SIGTERM.");
}

}  // namespace scalelab::cli
