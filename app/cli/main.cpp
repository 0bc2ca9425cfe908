// scalelab-cli: trains and benchmarks ScaleLab models from a terminal or a script.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "allocator_policy.h"
#include "cli/bench_command.h"
#include "cli/devices_command.h"
#include "cli/exit_codes.h"
#include "cli/export_command.h"
#include "cli/fields_command.h"
#include "cli/lesson_command.h"
#include "cli/report_problems.h"
#include "cli/runs_command.h"
#include "cli/train_command.h"
#include "quoted_text.h"

namespace {

constexpr const char* usage =
    "Usage:\n"
    "  scalelab-cli train [flags]        train one run, print a summary line per epoch\n"
    "  scalelab-cli runs list|show|export|import|delete [flags]\n"
    "                                    the runs kept in the run store\n"
    "  scalelab-cli bench train [flags]  measure training throughput (images/s, GFLOP/s)\n"
    "  scalelab-cli bench sgemm [flags]  measure the fp32 matrix-multiply peak (GFLOP/s)\n"
    "  scalelab-cli bench allreduce [flags]\n"
    "                                    measure the all-reduce between CPU devices (GB/s)\n"
    "  scalelab-cli lesson list|run [flags]\n"
    "                                    list the classroom lessons, or run one\n"
    "  scalelab-cli devices              the GPUs and CPU cores runs can use here\n"
    "  scalelab-cli fields               every experiment field: key, flag, default, values\n"
    "  scalelab-cli export pytorch --out DIR [train flags]\n"
    "                                    the experiment as a PyTorch DDP script\n"
    "  scalelab-cli --help | --version\n"
    "\n"
    "ScaleLab is a workbench for data-parallel deep-learning training. Run\n"
    "'scalelab-cli train --help', 'scalelab-cli runs --help', 'scalelab-cli bench --help'\n"
    "or 'scalelab-cli lesson --help' for each command's flags.\n"
    "\n"
    "Exit codes: 0 finished or reached the target, 1 failed, 2 bad input (nothing run),\n"
    "3 diverged (loss NaN or infinite), 130 cancelled (Ctrl-C).\n";

}  // namespace

int main(int argc, char** argv) {
    scalelab::return_large_blocks_to_the_system();
    using namespace scalelab::cli;
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fputs(usage, stderr);
        return exit_bad_input;
    }
    const std::string& command = args.front();
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    try {
        if (command == "--help" || command == "-h" || command == "help") {
            std::fputs(usage, stdout);
            return exit_ok;
        }
        if (command == "--version") {
            std::puts("scalelab-cli " SCALELAB_VERSION);
            return exit_ok;
        }
        if (command == "train")
            return run_train_command(rest);
        if (command == "runs")
            return run_runs_command(rest);
        if (command == "bench")
            return run_bench_command(rest);
        if (command == "lesson")
            return run_lesson_command(rest);
        if (command == "devices")
            return run_devices_command(rest);
        if (command == "fields")
            return run_fields_command(rest);
        if (command == "export")
            return run_export_command(rest);
    } catch (const std::exception& error) {
        // The engine reports what a user can fix as scalelab::Error, handled in the commands;
        // anything reaching here is a bug or the machine (out of memory), not bad input.
        std::fprintf(stderr, "scalelab-cli: internal error: %s\n", error.what());
        return exit_failed;
    }
    return report_problems({"unknown command " + scalelab::quoted_text(command) +
                            ": use train, runs, bench, lesson, devices, fields or export"},
                           "scalelab-cli --help");
}
