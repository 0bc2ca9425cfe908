#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/flag_parser.h"

namespace scalelab::cli {

// What every `bench` command shares: how it prints and logs, and whether it was asked for help.
// A command's options derive from it (struct BenchFooOptions : BenchOutputOptions {...}).
struct BenchOutputOptions {
    bool json = false;  // one JSON object per result row instead of a table
    std::string log_level = "info";
    bool help = false;
};

// `flags` followed by --json, --log-level and --help, under the heading "Output".
std::vector<Flag> with_bench_output_flags(std::vector<Flag> flags);

// Applies one of the command's own flags; returns what is wrong with its value, or "".
using ApplyBenchFlag = std::function<std::string(const GivenFlag&)>;

// Splits `args` by `flags` (from with_bench_output_flags), fills `output` from the shared
// flags and passes every other given flag to `apply`, in command-line order. Returns every
// problem: unknown flags, missing values and what `apply` said.
std::vector<std::string> parse_bench_flags(const std::vector<std::string>& args,
                                           const std::vector<Flag>& flags,
                                           BenchOutputOptions& output, const ApplyBenchFlag& apply);

// The whole of a command's parse_*_options: `Parsed` has `options` (derived from
// BenchOutputOptions) and `problems`; `apply(given, options)` applies one of the command's own
// flags and returns what is wrong with its value, or "".
template <typename Parsed, typename Apply>
Parsed parse_bench_options(const std::vector<std::string>& args, const std::vector<Flag>& flags,
                           Apply apply) {
    Parsed parsed;
    parsed.problems = parse_bench_flags(args, flags, parsed.options, [&](const GivenFlag& given) {
        return apply(given, parsed.options);
    });
    return parsed;
}

// The start of every bench command's run: prints `help` and returns exit_ok when --help was
// given; reports the problems and returns exit_bad_input when there are any; otherwise sets up
// logging at --log-level and returns nothing: go on and measure.
std::optional<int> start_bench(const BenchOutputOptions& output,
                               const std::vector<std::string>& problems, const std::string& help,
                               const std::string& help_command);

// Runs one measurement; an Error it throws is reported (with `help_command`) and becomes the
// command's exit code (exit_failed for an internal error, exit_bad_input otherwise).
std::optional<int> measure_or_report(const std::function<void()>& measure,
                                     const std::string& help_command);

}  // namespace scalelab::cli
