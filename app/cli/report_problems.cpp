#include "cli/report_problems.h"

#include <cstdio>
#include <sstream>

#include "cli/exit_codes.h"

namespace scalelab::cli {

int report_problems(const std::vector<std::string>& problems, const std::string& help_command) {
    for (const std::string& problem : problems) {
        std::istringstream lines(problem);
        for (std::string line; std::getline(lines, line);)
            std::fprintf(stderr, "error: %s\n", line.c_str());
    }
    std::fprintf(stderr, "Run '%s' for the flags.\n", help_command.c_str());
    return exit_bad_input;
}

int exit_code_for(const Error& error) {
    return error.kind() == ErrorKind::Internal ? exit_failed : exit_bad_input;
}

int report_error(const Error& error, const std::string& help_command) {
    report_problems({error.what()}, help_command);
    return exit_code_for(error);
}

int exit_code_for(const StoreError& error) {
    const bool write_failed =
        error.kind() == StoreError::Kind::DiskFull || error.kind() == StoreError::Kind::WriteFailed;
    return write_failed ? exit_failed : exit_bad_input;
}

int report_store_error(const StoreError& error, const std::string& help_command,
                       const std::string& advice) {
    report_problems({std::string(error.what()) + (advice.empty() ? "" : " (" + advice + ")")},
                    help_command);
    return exit_code_for(error);
}

}  // namespace scalelab::cli
