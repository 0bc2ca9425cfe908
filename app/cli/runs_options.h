#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scalelab::cli {

// The subcommands of `scalelab-cli runs`.
enum class RunsAction { List, Show, Export, Import, Delete };

// "list" -> RunsAction::List, ...; nothing for a word that is not a subcommand.
std::optional<RunsAction> parse_runs_action(const std::string& word);
// RunsAction::List -> "list", ...
std::string runs_action_name(RunsAction action);

// What `scalelab-cli runs <subcommand>` was asked to do.
struct RunsOptions {
    RunsAction action = RunsAction::List;
    std::string store;              // --store FILE; empty: RunStore::default_path()
    std::vector<std::int64_t> ids;  // show (one), export and delete (one or more, no repeats)
    std::string file;               // import: the file to read; export: -o FILE
    bool json = false;              // list --json: one JSON object per run
    bool expand = false;            // list --expand: each group's runs under its line
    bool csv = false;               // export --csv: the metrics as CSV, not a .scalelab.json
    bool yes = false;               // delete --yes: without asking
    bool help = false;
};

struct ParsedRunsOptions {
    RunsOptions options;
    std::vector<std::string> problems;  // each says what to change; empty: options are usable
};

// Reads the words after "runs <subcommand>": flags (-o is --output) and the subcommand's
// operands (run ids, or the file to import) in any order.
ParsedRunsOptions parse_runs_options(RunsAction action, const std::vector<std::string>& args);

// `scalelab-cli runs --help`: the subcommands.
std::string runs_usage();
// `scalelab-cli runs <subcommand> --help`: its operands and flags.
std::string runs_help(RunsAction action);

}  // namespace scalelab::cli
