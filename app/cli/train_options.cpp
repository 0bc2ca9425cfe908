#include "cli/train_options.h"

#include <QDir>
#include <QFile>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "cli/field_flags.h"
#include "cli/flag_parser.h"
#include "cli/flag_readers.h"
#include "cli/flag_values.h"
#include "cli/log_setup.h"
#include "data/load.h"
#include "error.h"
#include "repeats.h"
#include "run_group.h"
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

TrainFlag warmup_flag(std::string name, std::string help, WarmupUnit unit) {
    return {{name, unit == WarmupUnit::Epochs ? "X" : "N", help,
             std::string(to_string(FieldGroup::Warmup))},
            [name, unit](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_double(value);
                if (!parsed)
                    return expects(name, "a number", value);
                options.spec.warmup_length = *parsed;
                options.spec.warmup_unit = unit;
                return {};
            }};
}

// --global-batch G: the batch per device follows from it, once the devices are known.
TrainFlag global_batch_flag() {
    return {{"global-batch", "G",
             "G images per step in all, instead of --batch: batch = G / (devices x accumulation)",
             std::string(to_string(FieldGroup::DevicesAndBatch))},
            [](const std::string& value, TrainOptions& options) -> std::string {
                const auto parsed = parse_int(value);
                if (!parsed || *parsed < 1)
                    return expects("global-batch", "a positive whole number", value);
                options.global_batch = *parsed;
                return {};
            }};
}

// The flags of the RunSpec fields (field_flags.h), grouped as the form groups them, with the
// flags that set more than one field beside them.
std::vector<TrainFlag> spec_flags() {
    std::vector<TrainFlag> flags;
    for (const auto& [group, section] : EnumNames<FieldGroup>::table.entries) {
        for (const SpecField& field : spec_fields()) {
            if (field.group != group || field.flag.empty())
                continue;
            FieldFlag made = field_flag(field);
            flags.push_back(
                {std::move(made.flag),
                 [read = std::move(made.read)](const std::string& value, TrainOptions& options) {
                     return read(value, options.spec);
                 }});
            if (field.key == "batch")
                flags.push_back(global_batch_flag());
        }
        if (group == FieldGroup::Warmup) {
            flags.push_back(warmup_flag("warmup-epochs", "warm-up over X epochs (default 0: none)",
                                        WarmupUnit::Epochs));
            flags.push_back(
                warmup_flag("warmup-steps", "warm-up over N steps instead", WarmupUnit::Steps));
        }
    }
    return flags;
}

const std::vector<TrainFlag>& train_flags() {
    static const std::vector<TrainFlag> flags = [] {
        const std::string io = "Input and output", store = "Run store";
        std::vector<TrainFlag> out = spec_flags();
        std::vector<TrainFlag> others{
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
            {{.name = "tag",
              .value_name = "TAG",
              .help = "a tag for the run in the store; repeat for more tags",
              .section = store,
              .repeatable = true},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--tag needs a tag";
                 options.tags.push_back(value);
                 return {};
             }},
            {{"repeats", "N",
              "train N runs over seeds --seed .. --seed + N - 1 (1 to " +
                  std::to_string(most_repeats) +
                  ", default 1), recorded as one group: 'runs list' shows their mean and spread",
              store},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 const auto parsed = parse_int(value);
                 if (!parsed)
                     return expects("repeats",
                                    "a whole number from 1 to " + std::to_string(most_repeats),
                                    value);
                 options.repeats = *parsed;
                 return {};
             }},
            {{"config", "FILE",
              "read the run spec (and \"repeats\") from a JSON file first; flags override it", io},
             {}},
            {{"metrics-out", "FILE", "write step, epoch and end rows to FILE as JSON lines", io},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--metrics-out needs a file name";
                 options.metrics_out = value;
                 return {};
             }},
            {{"save-initial", "FILE",
              "write the initial parameters and batch-norm buffers to FILE (.npz, which numpy "
              "reads and PyTorch loads: docs/pytorch.md)",
              io},
             [](const std::string& value, TrainOptions& options) -> std::string {
                 if (value.empty())
                     return "--save-initial needs a file name";
                 options.save_initial = value;
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
        out.insert(out.end(), std::make_move_iterator(others.begin()),
                   std::make_move_iterator(others.end()));
        return out;
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
        Experiment experiment = experiment_from_json(file.readAll());
        parsed.options.spec = experiment.spec;
        parsed.options.repeats = experiment.repeats;
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

// Repeats once the seed is known (a config file's own are checked as it is read), and what
// cannot go with more than one run.
void check_repeats(const ParsedFlags& flags, ParsedTrainOptions& parsed) {
    const TrainOptions& options = parsed.options;
    if (flags.has("repeats") || flags.has("seed"))
        if (const QString problem = repeats_problem(
                flags.has("repeats") ? QStringLiteral("--repeats")
                                     : QStringLiteral("\"repeats\" (from --config)"),
                options.repeats, options.spec.seed);
            !problem.isEmpty()) {
            parsed.problems.push_back(problem.toStdString());
            return;
        }
    if (options.repeats <= 1)
        return;
    const std::string repeats = "--repeats " + std::to_string(options.repeats);
    if (options.no_store)
        parsed.problems.push_back(repeats +
                                  " records its runs as one group in the run store: drop "
                                  "--no-store, or train one run");
    if (!options.metrics_out.empty())
        parsed.problems.push_back(repeats +
                                  " trains several runs, and --metrics-out writes one "
                                  "run's rows: drop --metrics-out, or train one run");
    if (!options.save_initial.empty())
        parsed.problems.push_back(repeats +
                                  " trains several runs, each from its own seed, and "
                                  "--save-initial writes one run's initial state: drop "
                                  "--save-initial, or train one run");
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
        if (given.name == "config") {
            parsed.options.config = given.value;
            read_config(given.value, parsed);
        }
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
    check_repeats(flags, parsed);
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
        "  scalelab-cli train --model cnn --epochs 2 --repeats 5 --seed 1\n"
        "\n"
        "Exit codes: 0 finished or reached the target, 1 failed, 2 bad input (nothing run),\n"
        "3 diverged (loss NaN or infinite), 130 cancelled (Ctrl-C), 143 cancelled by SIGTERM.\n"
        "With --repeats, the first of these other than 0 among the runs; a run that fails or\n"
        "is cancelled ends the launch, a diverged one does not.");
}

}  // namespace scalelab::cli
