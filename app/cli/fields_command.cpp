#include "cli/fields_command.h"

#include <cstdio>

#include "cli/exit_codes.h"
#include "cli/report_problems.h"
#include "field_reference.h"
#include "quoted_text.h"

namespace scalelab::cli {

namespace {

constexpr const char* fields_help =
    "Usage: scalelab-cli fields\n"
    "\n"
    "Prints every experiment field as Markdown (the text of docs/fields.md): its key in\n"
    "config and lesson files, its train flag, its label in the window, its default, the\n"
    "values it takes, when it applies and what it does.\n";

}  // namespace

int run_fields_command(const std::vector<std::string>& args) {
    if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
        std::fputs(fields_help, stdout);
        return exit_ok;
    }
    if (!args.empty())
        return report_problems(
            {"fields takes no words or flags (got " + quoted_text(args.front()) + ")"},
            "scalelab-cli fields --help");
    std::fputs(field_reference_markdown().c_str(), stdout);
    return exit_ok;
}

}  // namespace scalelab::cli
