#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lesson.h"

namespace scalelab::cli {

// The subcommands of `scalelab-cli lesson`.
enum class LessonAction { List, Run };

// What `scalelab-cli lesson list|run` was asked to do.
struct LessonOptions {
    LessonAction action = LessonAction::List;
    std::string lesson;                  // run: a lesson file, or its number in `lesson list`
    LessonSize size = LessonSize::Full;  // run --size full|test
    std::string store;                   // run --store FILE; empty: RunStore::default_path()
    bool no_store = false;               // run --no-store: record nothing
    std::optional<std::uint64_t> seed;   // run --seed N: every run's seed (default: the file's)
    std::string log_level = "warn";
    bool help = false;
};

struct ParsedLessonOptions {
    LessonOptions options;
    std::vector<std::string> problems;  // each says what to change; empty: options are usable
};

// Reads the words after "lesson": the subcommand, for run the lesson right after it, then flags.
ParsedLessonOptions parse_lesson_options(const std::vector<std::string>& args);

std::string lesson_help();

}  // namespace scalelab::cli
