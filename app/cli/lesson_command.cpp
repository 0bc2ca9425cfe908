#include "cli/lesson_command.h"

#include <spdlog/fmt/fmt.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>

#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "assessment.h"
#include "cli/exit_codes.h"
#include "cli/flag_values.h"
#include "cli/interrupt_watcher.h"
#include "cli/lesson_options.h"
#include "cli/log_setup.h"
#include "cli/report_problems.h"
#include "lesson_library.h"
#include "printable_text.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_store.h"

namespace scalelab::cli {

namespace {

constexpr const char* lesson_help_command = "scalelab-cli lesson --help";
// What a run store's error adds: where to look, or how to do without one.
constexpr const char* lesson_store_advice = "check --store, or run with --no-store";

// Lesson files and stored runs are the user's text: printed with control characters escaped.
std::string text(const QString& s) {
    return printable(s).toStdString();
}

std::string file_text(const QString& file) {
    return text(QDir::toNativeSeparators(file));
}

std::vector<std::string> lines_of(const QString& message) {
    std::vector<std::string> lines;
    for (const QString& line : message.split(u'\n', Qt::SkipEmptyParts))
        lines.push_back(text(line));
    return lines;
}

int list_command(const DeviceInventory& devices) {
    const std::vector<LessonEntry> entries = list_lessons(devices);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const LessonEntry& entry = entries[i];
        const std::string title =
            entry.lesson ? text(entry.lesson->title) : std::string("(cannot be opened)");
        fmt::print("{:>3}  {:<32}  {}\n", i + 1, title, file_text(entry.file));
        for (const std::string& line : lines_of(entry.error))
            fmt::print("       {}\n", line);
    }
    fmt::print("\nYour own lessons go in {} (scalelab-cli lesson run NUMBER|FILE).\n",
               file_text(user_lessons_folder()));
    return exit_ok;
}

std::string optional_number_text(const std::optional<double>& value, int decimals) {
    return value ? fmt::format("{:.{}f}", *value, decimals) : std::string("-");
}

// Prints each of the lesson's claims with its verdict; false when one did not hold.
bool print_claims(const Lesson& lesson, const RunCollection& runs, const std::vector<int>& ids) {
    if (lesson.claims.empty())
        return true;
    fmt::print("\nWhat the lesson claims:\n");
    int failed = 0;
    for (const LessonClaim& claim : lesson.claims) {
        const ClaimVerdict verdict = evaluate_claim(claim, runs, ids);
        failed += verdict.outcome != ClaimOutcome::Held;
        fmt::print("  {:<7} {}\n          {}\n",
                   verdict.outcome == ClaimOutcome::Held ? "held" : "FAILED", text(claim.text),
                   text(verdict.text));
    }
    if (failed > 0)
        fmt::print("{} of {} claims did not hold on these runs\n", failed, lesson.claims.size());
    return failed == 0;
}

// Trains the lesson's runs through a RunController and RunCollection, as the desktop app does,
// printing each run's epochs and how it ended.
int run_command(const LessonOptions& options, const Lesson& lesson) {
    int argc = 1;
    char program[] = "scalelab-cli";
    char* argv[] = {program, nullptr};
    QCoreApplication app(argc, argv);

    std::unique_ptr<RunStore> store;
    if (!options.no_store) {
        try {
            store = RunStore::open(options.store.empty() ? RunStore::default_path()
                                                         : QString::fromStdString(options.store));
            store->require_sound();
        } catch (const StoreError& error) {
            return report_store_error(error, lesson_help_command, lesson_store_advice);
        }
    }
    RunController controller;
    RunCollection collection(controller);
    if (store) {
        try {
            collection.setStore(std::move(store));
        } catch (const StoreError& error) {
            return report_store_error(error, lesson_help_command, lesson_store_advice);
        }
    }
    QObject::connect(&collection, &RunCollection::storeError, &app, [](const QString& message) {
        std::fprintf(stderr, "warning: %s\n", message.toUtf8().constData());
    });

    fmt::print("{}: {} run{}\n", text(lesson.title), lesson.runs.size(),
               lesson.runs.size() == 1 ? "" : "s");
    if (!lesson.setting_note.isEmpty())
        fmt::print("{}\n", text(lesson.setting_note));
    std::fflush(stdout);

    std::vector<RunSpec> specs;
    std::vector<QString> names;
    for (const LessonRun& run : lesson.runs) {
        specs.push_back(run.spec);
        if (options.seed)
            specs.back().seed = *options.seed;
        names.push_back(lesson.title + QStringLiteral(": ") + run.name);
    }
    // Ctrl-C stops the runs, also those being queued; the collection is touched on its own
    // thread only.
    InterruptWatcher interrupt_watcher([&collection](int) {
        QMetaObject::invokeMethod(&collection, [&collection] { collection.stopAll(); });
    });
    QElapsedTimer wall;
    wall.start();
    const std::vector<int> ids = collection.enqueue(specs, names);
    if (ids.size() != specs.size())
        return exit_failed;  // the store could not create a run; storeError said why

    struct Progress {
        std::size_t index = 0;
        bool announced = false;
        std::size_t epochs_printed = 0;
        bool ended = false;
    };
    std::map<int, Progress> progress;
    for (std::size_t i = 0; i < ids.size(); ++i)
        progress[ids[i]].index = i;
    std::size_t ended = 0;
    QObject::connect(&collection, &RunCollection::runChanged, &app, [&](int id) {
        const auto it = progress.find(id);
        const RunRecord* run = collection.find(id);
        if (it == progress.end() || run == nullptr)
            return;
        Progress& p = it->second;
        if (run->started && !p.announced) {
            p.announced = true;
            fmt::print("run {}/{}: {} ({}, {} x {} images, {} epochs)\n", p.index + 1, ids.size(),
                       text(lesson.runs[p.index].name), run->spec.model, run->info.devices,
                       run->spec.batch, run->spec.epochs);
        }
        for (; p.epochs_printed < run->epochs.size(); ++p.epochs_printed) {
            const EpochMetrics& epoch = run->epochs[p.epochs_printed];
            fmt::print("  epoch {}/{}  train loss {:.4f}  val accuracy {:.4f}  {:.0f} images/s\n",
                       epoch.epoch, run->spec.epochs, epoch.train_loss, epoch.val_accuracy,
                       epoch.images_per_s);
        }
        if (!is_active(run->state) && !p.ended) {
            p.ended = true;
            ++ended;
            fmt::print("  {}: {}, best val accuracy {}, {} images/s, {:.1f} s of training{}{}\n",
                       text(lesson.runs[p.index].name), to_string(run->state),
                       optional_number_text(run->best_val_accuracy(), 4),
                       optional_number_text(run->mean_images_per_s(), 0), run->train_seconds,
                       run->message.isEmpty() ? "" : ": ", text(run->message));
            if (run->disturbed())
                fmt::print(
                    "  disturbed: other programs used {:.0f}% of the cores during this "
                    "run, so its images/s may be low\n",
                    *run->other_programs_share() * 100.0);
        }
        std::fflush(stdout);
        if (ended == ids.size())
            app.quit();
    });

    app.exec();

    fmt::print("\n{}: {} run{} in {:.0f} s\n", text(lesson.title), ids.size(),
               ids.size() == 1 ? "" : "s", double(wall.elapsed()) / 1000.0);
    int exit_code = exit_ok;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const RunRecord* run = collection.find(ids[i]);
        if (lesson.assessment)
            fmt::print("assessment of {}: {}\n", text(lesson.runs[i].name),
                       text(assess(*lesson.assessment, *run).text));
        if (run->state == RunState::Failed)
            exit_code = exit_failed;
        else if (run->state == RunState::Cancelled && exit_code == exit_ok)
            exit_code = interrupt_watcher.received() == SIGTERM ? exit_terminated : exit_cancelled;
    }
    if (!print_claims(lesson, collection, ids) && exit_code == exit_ok)
        exit_code = exit_failed;
    return exit_code;
}

}  // namespace

int run_lesson_command(const std::vector<std::string>& args) {
    const ParsedLessonOptions parsed = parse_lesson_options(args);
    const LessonOptions& options = parsed.options;
    if (options.help) {
        std::fputs(lesson_help().c_str(), stdout);
        return exit_ok;
    }
    if (!parsed.problems.empty())
        return report_problems(parsed.problems, lesson_help_command);
    setup_logging(options.log_level);
    const DeviceInventory devices = discover_devices();
    if (options.action == LessonAction::List)
        return list_command(devices);
    const LessonEntry entry =
        find_lesson(QString::fromStdString(options.lesson), devices, options.size);
    if (!entry.lesson)
        return report_problems(lines_of(entry.error), lesson_help_command);
    return run_command(options, *entry.lesson);
}

}  // namespace scalelab::cli
