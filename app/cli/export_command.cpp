#include "cli/export_command.h"

#include <QDir>
#include <QString>

#include <spdlog/fmt/fmt.h>

#include <cstdio>

#include "cli/exit_codes.h"
#include "cli/report_problems.h"
#include "cli/train_options.h"
#include "pytorch_export.h"
#include "quoted_text.h"

namespace scalelab::cli {

namespace {

constexpr const char* export_help_command = "scalelab-cli export --help";

constexpr const char* export_usage =
    "Usage: scalelab-cli export pytorch --out DIR [train flags]\n"
    "\n"
    "Writes the experiment that the train flags describe (--config FILE, then the flags on top\n"
    "of it; 'scalelab-cli train --help' lists them) as a PyTorch DistributedDataParallel\n"
    "script in DIR: train_ddp.py, experiment.json, launch.sh (this machine), job.sbatch\n"
    "(Slurm) and README.md. What PyTorch cannot carry is refused with the field named; what\n"
    "it carries differently is printed as a warning and listed in README.md.\n"
    "\n"
    "Example:\n"
    "  scalelab-cli export pytorch --config exp.json --out exp-pytorch\n";

}  // namespace

std::string export_help() {
    return export_usage;
}

int run_export_command(const std::vector<std::string>& args) {
    if (args.empty() || args.front() == "--help" || args.front() == "-h") {
        std::fputs(export_usage, args.empty() ? stderr : stdout);
        return args.empty() ? exit_bad_input : exit_ok;
    }
    if (args.front() != "pytorch")
        return report_problems({"export writes 'pytorch' (got " + quoted_text(args.front()) +
                                "): scalelab-cli export pytorch --out DIR"},
                               export_help_command);
    std::string out;
    std::vector<std::string> train_args;
    std::vector<std::string> problems;
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] != "--out") {
            train_args.push_back(args[i]);
            continue;
        }
        if (i + 1 >= args.size() || args[i + 1].empty())
            problems.push_back("--out needs a folder");
        else
            out = args[++i];
    }
    ParsedTrainOptions parsed = parse_train_options(train_args);
    if (parsed.options.help) {
        std::fputs(export_usage, stdout);
        return exit_ok;
    }
    if (out.empty() && problems.empty())
        problems.push_back("give the folder to write to: --out DIR");
    for (std::string& problem : parsed.problems)
        problems.push_back(std::move(problem));
    for (const std::string& problem : parsed.options.spec.validate())
        problems.push_back(problem);
    if (problems.empty())
        for (const QString& problem : pytorch_export_problems(parsed.options.spec))
            problems.push_back(problem.toStdString());
    if (!problems.empty())
        return report_problems(problems, export_help_command);

    QString error;
    if (!write_pytorch_export(parsed.options.spec, QString::fromStdString(out), &error)) {
        std::fprintf(stderr, "error: %s\n", error.toStdString().c_str());
        return exit_failed;
    }
    for (const QString& warning : pytorch_export_warnings(parsed.options.spec))
        std::fprintf(stderr, "warning: %s\n", warning.toStdString().c_str());
    fmt::print("wrote {}: train_ddp.py, experiment.json, launch.sh, job.sbatch, README.md\n",
               QDir::toNativeSeparators(QString::fromStdString(out)).toStdString());
    return exit_ok;
}

}  // namespace scalelab::cli
