#include "cli/lesson_options.h"

#include <QDir>

#include "cli/flag_parser.h"
#include "cli/log_setup.h"
#include "lesson_library.h"
#include "run_store.h"

namespace scalelab::cli {

namespace {

std::vector<Flag> lesson_flags() {
    const std::string run = "Run", output = "Output";
    return {
        {"size", "full|test",
         "full: as written; test: a few hundred synthetic images, at most 2 epochs (default "
         "full)",
         run},
        {"store", "FILE",
         "the run store to record the runs in (default " +
             QDir::toNativeSeparators(RunStore::default_path()).toStdString() + ")",
         run},
        {"no-store", "", "do not record the runs", run},
        {"seed", "N",
         "every run's seed, to check the lesson's claims on other seeds (default: the "
         "lesson's)",
         run},
        {"log-level", "LEVEL", log_level_names() + " (default warn), logs go to stderr", output},
        {"help", "", "show this help", output},
    };
}

}  // namespace

ParsedLessonOptions parse_lesson_options(const std::vector<std::string>& args) {
    ParsedLessonOptions parsed;
    LessonOptions& options = parsed.options;
    const std::string action = args.empty() ? std::string() : args.front();
    if (action == "--help" || action == "-h") {
        options.help = true;
        return parsed;
    }
    std::size_t flags_from = 1;
    if (action == "list") {
        options.action = LessonAction::List;
    } else if (action == "run") {
        options.action = LessonAction::Run;
        if (args.size() < 2 || args[1].empty() || args[1][0] == '-')
            parsed.problems.push_back(
                "lesson run needs a lesson: a number from 'scalelab-cli lesson list', or a file");
        else
            options.lesson = args[flags_from++];
    } else {
        parsed.problems.push_back("lesson takes list or run (got '" + action +
                                  "'): scalelab-cli lesson list");
        return parsed;
    }

    const ParsedFlags flags =
        parse_flags(std::vector<std::string>(args.begin() + std::ptrdiff_t(flags_from), args.end()),
                    lesson_flags());
    parsed.problems.insert(parsed.problems.end(), flags.problems.begin(), flags.problems.end());
    if (flags.has("help")) {
        options.help = true;
        return parsed;
    }
    if (options.action == LessonAction::List)
        for (const char* name : {"size", "store", "no-store", "seed"})
            if (flags.has(name))
                parsed.problems.push_back(std::string("--") + name +
                                          " is for 'lesson run': lesson list takes --log-level");
    if (flags.has("no-store") && flags.has("store"))
        parsed.problems.push_back("give --store FILE or --no-store, not both");
    for (const GivenFlag& given : flags.given) {
        if (given.name == "size") {
            if (given.value == "full")
                options.size = LessonSize::Full;
            else if (given.value == "test")
                options.size = LessonSize::Test;
            else
                parsed.problems.push_back("--size expects full or test, got '" + given.value + "'");
        } else if (given.name == "store") {
            if (given.value.empty())
                parsed.problems.push_back("--store needs a file name");
            options.store = given.value;
        } else if (given.name == "no-store") {
            options.no_store = true;
        } else if (given.name == "seed") {
            options.seed = parse_uint64(given.value);
            if (!options.seed)
                parsed.problems.push_back("--seed expects a whole number from 0, got '" +
                                          given.value + "'");
        } else if (given.name == "log-level") {
            if (!is_log_level(given.value))
                parsed.problems.push_back("--log-level expects " + log_level_names() + ", got '" +
                                          given.value + "'");
            options.log_level = given.value;
        }
    }
    return parsed;
}

std::string lesson_help() {
    return format_help(
        "scalelab-cli lesson list\n"
        "       scalelab-cli lesson run FILE|NUMBER [flags]",
        "Classroom lessons: each trains a few runs one after another to show one effect of\n"
        "data-parallel training (batch size, scaling out, learning-rate scaling, warm-up,\n"
        "large-batch optimizers, the gradient noise scale, the assessment challenge).\n"
        "\n"
        "'list' numbers the shipped lessons and your own (JSON files in\n  " +
            QDir::toNativeSeparators(user_lessons_folder()).toStdString() +
            ")\nand shows what is wrong with any file that cannot be opened. 'run' trains a "
            "lesson's\nruns and prints each run's status, best validation accuracy and "
            "images/s, then the\ntotal time, whether each of the lesson's claims about its runs "
            "held (with the\nmeasured values) and, for a lesson with an assessment, whether "
            "each run passed.\nThe runs are recorded in the run store, where the desktop app "
            "shows them too.",
        lesson_flags(),
        "Examples:\n"
        "  scalelab-cli lesson list\n"
        "  scalelab-cli lesson run 1\n"
        "  scalelab-cli lesson run my-lesson.json --no-store\n"
        "\n"
        "Exit codes: 0 every run ended (a run that diverges is a lesson's outcome, not an\n"
        "error), 1 a run failed or a claim of the lesson did not hold, 2 bad input (nothing\n"
        "run), 130 cancelled (Ctrl-C), 143 cancelled by SIGTERM.");
}

}  // namespace scalelab::cli
