#include "cli/log_setup.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace scalelab::cli {

namespace {

constexpr const char* level_names[] = {"trace", "debug", "info", "warn", "error", "off"};

}  // namespace

const std::string& log_level_names() {
    static const std::string names = [] {
        std::string joined;
        for (const char* name : level_names)
            joined += (joined.empty() ? "" : "|") + std::string(name);
        return joined;
    }();
    return names;
}

bool is_log_level(const std::string& name) {
    for (const char* known : level_names)
        if (name == known)
            return true;
    return false;
}

void setup_logging(const std::string& level) {
    auto logger = spdlog::stderr_color_mt("scalelab-cli");
    logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    logger->set_level(spdlog::level::from_str(level));
    spdlog::set_default_logger(std::move(logger));
}

}  // namespace scalelab::cli
