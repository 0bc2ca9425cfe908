#include "cli/runs_options.h"

#include <QDir>

#include <algorithm>
#include <limits>

#include "cli/flag_parser.h"
#include "cli/flag_values.h"
#include "run_exchange.h"
#include "run_store.h"

namespace scalelab::cli {

namespace {

// What each subcommand takes, for parsing and for its help.
struct ActionInfo {
    RunsAction action;
    std::string word;
    std::string operands;  // in the usage line: "ID", "ID...", "FILE" or ""
    std::string summary;   // one line in `runs --help`
    std::string description;
    std::vector<Flag> flags;  // its own, before --store and --help
    std::string examples;
};

const std::vector<ActionInfo>& actions() {
    static const std::vector<ActionInfo> all{
        {RunsAction::List,
         "list",
         "",
         "list the stored runs, oldest first",
         "Lists the runs in the store, oldest first: id, name, state, model, devices, global\n"
         "batch, optimizer, best validation accuracy, images/s and when each was created.\n"
         "The runs of one 'train --repeats' are one line, where their first run would be: how\n"
         "many ended how, and the mean ± standard deviation of their figures.",
         {{"json", "", "print one JSON object per run (with its group) instead of a table",
           "Output"},
          {"expand", "", "list each group's runs under its line", "Output"}},
         "  scalelab-cli runs list\n"
         "  scalelab-cli runs list --expand\n"
         "  scalelab-cli runs list --json --store lab.sqlite"},
        {RunsAction::Show,
         "show",
         "ID",
         "show one run's configuration and summary",
         "Shows one run: its state, tags, dates, machine, configuration (the settings that\n"
         "differ from the defaults) and summary (steps, best validation accuracy, images/s,\n"
         "time to each target reached).",
         {},
         "  scalelab-cli runs show 3"},
        {RunsAction::Export,
         "export",
         "ID...",
         "write runs to a " + std::string(exchange_suffix) + " file (--csv: metrics as CSV)",
         "Writes the runs, with every metric row, to a " + std::string(exchange_suffix) +
             " file that 'runs import'\nreads back into any store; with --csv, writes their "
             "metrics as one CSV file in long\nformat (run, run_id, step, epoch, wall_time_s, "
             "metric, value).",
         {{"output", "FILE", "the file to write, also -o FILE (replaced only once written)",
           "Output"},
          {"csv", "", "write the metrics as CSV", "Output"}},
         "  scalelab-cli runs export 3 4 -o sweep" + std::string(exchange_suffix) +
             "\n"
             "  scalelab-cli runs export 3 --csv -o run3.csv"},
        {RunsAction::Import,
         "import",
         "FILE",
         "add the runs of a " + std::string(exchange_suffix) +
             " file, another run store file or a metrics file, as new runs",
         "Adds every run of a " + std::string(exchange_suffix) +
             " file, or of another run store file (one\ncopied back from a cluster job), or the "
             "run of a metrics file (train --metrics-out, or an\nexported PyTorch script's, "
             "tagged pytorch), to the store as a new run, with a new id\n(nothing is "
             "overwritten), and prints the new ids. The whole file is checked first: a\nfile "
             "with any problem adds nothing.",
         {},
         "  scalelab-cli runs import sweep" + std::string(exchange_suffix)},
        {RunsAction::Delete,
         "delete",
         "ID...",
         "delete runs and their metrics",
         "Deletes the runs and their metrics. Asks first on a terminal; from a script (stdin\n"
         "not a terminal) it deletes only with --yes. A run that is still running is refused.",
         {{"yes", "", "delete without asking", "Delete"}},
         "  scalelab-cli runs delete 3 4\n"
         "  scalelab-cli runs delete 5 --yes"},
    };
    return all;
}

const ActionInfo& info_of(RunsAction action) {
    return *std::find_if(actions().begin(), actions().end(),
                         [action](const ActionInfo& info) { return info.action == action; });
}

std::vector<Flag> flags_of(RunsAction action) {
    std::vector<Flag> flags = info_of(action).flags;
    flags.push_back({"store", "FILE",
                     "the run store (default " +
                         QDir::toNativeSeparators(RunStore::default_path()).toStdString() + ")",
                     "Store"});
    flags.push_back({"help", "", "show this help", "Store"});
    return flags;
}

// parse_flags reads flags only: the operands (ids, the file to import) are taken out first.
// A word is an operand unless it starts with '-' or is the value of the flag before it.
void split_operands(const std::vector<std::string>& args, const std::vector<Flag>& flags,
                    std::vector<std::string>& flag_words, std::vector<std::string>& operands) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string arg = args[i] == "-o" ? std::string("--output") : args[i];
        if (arg.size() < 2 || arg[0] != '-') {
            operands.push_back(arg);
            continue;
        }
        flag_words.push_back(arg);
        const bool has_value = arg.find('=') != std::string::npos;
        const auto flag = std::find_if(flags.begin(), flags.end(),
                                       [&](const Flag& f) { return arg == "--" + f.name; });
        if (!has_value && flag != flags.end() && !flag->value_name.empty() && i + 1 < args.size())
            flag_words.push_back(args[++i]);
    }
}

std::optional<std::int64_t> parse_run_id(const std::string& text) {
    const auto value = parse_uint64(text);
    if (!value || *value < 1 || *value > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
    return std::int64_t(*value);
}

void read_operands(const std::vector<std::string>& operands, ParsedRunsOptions& parsed) {
    RunsOptions& options = parsed.options;
    const std::string& word = info_of(options.action).word;
    switch (options.action) {
        case RunsAction::List:
            for (const std::string& operand : operands)
                parsed.problems.push_back("runs list takes no run ids or files, got '" + operand +
                                          "'");
            return;
        case RunsAction::Import:
            if (operands.size() != 1)
                parsed.problems.push_back("runs import takes one file to import, got " +
                                          std::to_string(operands.size()));
            else
                options.file = operands.front();
            return;
        case RunsAction::Show:
        case RunsAction::Export:
        case RunsAction::Delete:
            break;
    }
    if (operands.empty())
        parsed.problems.push_back("runs " + word + " needs a run id, as 'scalelab-cli runs list' " +
                                  "shows them");
    if (options.action == RunsAction::Show && operands.size() > 1)
        parsed.problems.push_back("runs show shows one run, got " +
                                  std::to_string(operands.size()) + " ids");
    for (const std::string& operand : operands) {
        const auto id = parse_run_id(operand);
        if (!id)
            parsed.problems.push_back("'" + operand +
                                      "' is not a run id: ids are whole numbers from 1, as "
                                      "'scalelab-cli runs list' shows them");
        else if (std::find(options.ids.begin(), options.ids.end(), *id) == options.ids.end())
            options.ids.push_back(*id);
    }
}

}  // namespace

std::optional<RunsAction> parse_runs_action(const std::string& word) {
    for (const ActionInfo& info : actions())
        if (info.word == word)
            return info.action;
    return std::nullopt;
}

std::string runs_action_name(RunsAction action) {
    return info_of(action).word;
}

ParsedRunsOptions parse_runs_options(RunsAction action, const std::vector<std::string>& args) {
    const std::vector<Flag> flags = flags_of(action);
    std::vector<std::string> flag_words, operands;
    split_operands(args, flags, flag_words, operands);
    const ParsedFlags given = parse_flags(flag_words, flags);

    ParsedRunsOptions parsed;
    parsed.options.action = action;
    parsed.problems = given.problems;
    if (given.has("help")) {
        parsed.options.help = true;
        return parsed;
    }
    RunsOptions& options = parsed.options;
    for (const GivenFlag& flag : given.given) {
        if (flag.name == "store") {
            if (flag.value.empty())
                parsed.problems.push_back("--store needs a file name");
            options.store = flag.value;
        } else if (flag.name == "output") {
            if (flag.value.empty())
                parsed.problems.push_back("--output needs a file name");
            options.file = flag.value;
        } else if (flag.name == "json") {
            options.json = true;
        } else if (flag.name == "expand") {
            options.expand = true;
        } else if (flag.name == "csv") {
            options.csv = true;
        } else if (flag.name == "yes") {
            options.yes = true;
        }
    }
    if (options.json && options.expand)
        parsed.problems.push_back(
            "--expand is for the table; --json lists every run with its group: drop one");
    if (action == RunsAction::Export && !given.has("output"))
        parsed.problems.push_back("runs export needs the file to write: -o FILE");
    read_operands(operands, parsed);
    return parsed;
}

std::string runs_usage() {
    constexpr std::size_t summary_column = 24;
    std::string text = "Usage: scalelab-cli runs <command> [flags]\n\n";
    for (const ActionInfo& info : actions()) {
        std::string left = "  " + info.word + (info.operands.empty() ? "" : " " + info.operands);
        if (info.action == RunsAction::Export)
            left += " -o FILE";
        left += left.size() < summary_column ? std::string(summary_column - left.size(), ' ')
                                             : "\n" + std::string(summary_column, ' ');
        text += left + info.summary + "\n";
    }
    return text +
           "\n"
           "Every run that 'scalelab-cli train' and the desktop app record is kept in one SQLite\n"
           "file, the run store (default " +
           QDir::toNativeSeparators(RunStore::default_path()).toStdString() +
           ";\n--store FILE for another). Run 'scalelab-cli runs list --help' (or show, export,\n"
           "import, delete) for each one's flags.\n"
           "\n"
           "Exit codes: 0 done, 1 the store could not be written (disk full), 2 bad input\n"
           "(an unknown id, a bad store or import file; nothing changed).\n";
}

std::string runs_help(RunsAction action) {
    const ActionInfo& info = info_of(action);
    return format_help("scalelab-cli runs " + info.word +
                           (info.operands.empty() ? "" : " " + info.operands) + " [flags]",
                       info.description, flags_of(action), "Examples:\n" + info.examples);
}

}  // namespace scalelab::cli
