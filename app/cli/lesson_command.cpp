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
#include <variant>

#include "assessment.h"
#include "cli/exit_codes.h"
#include "cli/flag_values.h"
#include "cli/interrupt_watcher.h"
#include "cli/lesson_options.h"
#include "cli/log_setup.h"
#include "cli/report_problems.h"
#include "lesson_library.h"
#include "lesson_queue.h"
#include "printable_text.h"
#include "repeats.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_group.h"
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
bool print_claims(const Lesson& lesson, const RunCollection& runs, const LessonRunIds& ids) {
    if (lesson.claims.empty())
        return true;
    fmt::print("\nWhat the lesson claims:\n");
    int failed = 0;
    for (const LessonClaim& claim : lesson.claims) {
        const ClaimVerdict verdict = evaluate_claim(claim, runs, ids);
        failed += verdict.outcome != ClaimOutcome::Held;
        // A claim within seed noise is not shown by these runs: it counts as not held.
        fmt::print("  {:<9} {}\n            {}\n",
                   verdict.outcome == ClaimOutcome::Held          ? "held"
                   : verdict.outcome == ClaimOutcome::WithinNoise ? "NOT SHOWN"
                                                                  : "FAILED",
                   text(claim.text), text(verdict.text));
    }
    if (failed > 0)
        fmt::print("{} of {} claims did not hold on these runs\n", failed, lesson.claims.size());
    return failed == 0;
}

// "3 runs: 3 finished; best val accuracy 0.871 ± 0.004": how a lesson run's group ended.
std::string group_text(const GroupSummary& summary) {
    std::string line = text(group_ended_text(summary));
    if (summary.best_val_accuracy)
        line += fmt::format("; best val accuracy {:.4f} ± {:.4f}", summary.best_val_accuracy->mean,
                            summary.best_val_accuracy->stddev);
    return line;
}

// Prints each run's start, epochs and end as the collection reports them, and each lesson
// run's group once its last member ends; quits `app` when every run has ended.
class LessonProgress {
  public:
    LessonProgress(const Lesson& lesson, const RunCollection& collection, const LessonRunIds& ids)
        : lesson_(lesson), collection_(collection), ids_(ids) {
        for (std::size_t i = 0; i < ids.size(); ++i)
            for (const int id : ids[i])
                progress_[id] = {.lesson_run = i, .number = progress_.size() + 1};
    }

    bool allEnded() const { return ended_ == progress_.size(); }

    void runChanged(int id) {
        const auto it = progress_.find(id);
        const RunRecord* run = collection_.find(id);
        if (it == progress_.end() || run == nullptr)
            return;
        Progress& p = it->second;
        if (run->started && !p.announced) {
            p.announced = true;
            fmt::print("run {}/{}: {} ({}, {} x {} images, {} epochs)\n", p.number,
                       progress_.size(), label(p.lesson_run, *run), run->spec.model,
                       run->info.devices, run->spec.batch, run->spec.epochs);
        }
        for (; p.epochs_printed < run->epochs.size(); ++p.epochs_printed) {
            const EpochMetrics& epoch = run->epochs[p.epochs_printed];
            fmt::print("  epoch {}/{}  train loss {:.4f}  val accuracy {:.4f}  {:.0f} images/s\n",
                       epoch.epoch, run->spec.epochs, epoch.train_loss, epoch.val_accuracy,
                       epoch.images_per_s);
        }
        if (!is_active(run->state) && !p.ended) {
            p.ended = true;
            ++ended_;
            printEnd(label(p.lesson_run, *run), *run);
            printGroup(p.lesson_run);
        }
        std::fflush(stdout);
    }

  private:
    struct Progress {
        std::size_t lesson_run = 0;
        std::size_t number = 0;  // counted from 1 over all the lesson's runs
        bool announced = false;
        std::size_t epochs_printed = 0;
        bool ended = false;
    };

    std::string label(std::size_t lesson_run, const RunRecord& run) const {
        return text(lesson_member_name(lesson_.runs[lesson_run], run.spec.seed));
    }

    static void printEnd(const std::string& label, const RunRecord& run) {
        fmt::print("  {}: {}, best val accuracy {}, {} images/s, {:.1f} s of training{}{}\n", label,
                   to_string(run.state), optional_number_text(run.best_val_accuracy(), 4),
                   optional_number_text(run.mean_images_per_s(), 0), run.train_seconds,
                   run.message.isEmpty() ? "" : ": ", text(run.message));
        if (run.disturbed())
            fmt::print(
                "  disturbed: other programs used {:.0f}% of the cores during this "
                "run, so its images/s may be low\n",
                *run.other_programs_share() * 100.0);
    }

    // The lesson run's group, once all its members ended (nothing for a run without repeats).
    void printGroup(std::size_t lesson_run) const {
        const std::vector<int>& members = ids_[lesson_run];
        std::vector<const RunRecord*> records;
        for (const int id : members) {
            if (!progress_.at(id).ended)
                return;
            records.push_back(collection_.find(id));
        }
        if (records.size() > 1)
            fmt::print("{}: {}\n", text(lesson_.runs[lesson_run].name),
                       group_text(group_summary(records.front()->group, records)));
    }

    const Lesson& lesson_;
    const RunCollection& collection_;
    const LessonRunIds& ids_;
    std::map<int, Progress> progress_;
    std::size_t ended_ = 0;
};

// The exit code of the ended runs: failed before cancelled before ok.
int runs_exit_code(const RunCollection& collection, const std::vector<int>& ids,
                   const InterruptWatcher& interrupt_watcher) {
    int exit_code = exit_ok;
    for (const int id : ids) {
        const RunRecord* run = collection.find(id);
        if (run->state == RunState::Failed)
            exit_code = exit_failed;
        else if (run->state == RunState::Cancelled && exit_code == exit_ok)
            exit_code = interrupt_watcher.received() == SIGTERM ? exit_terminated : exit_cancelled;
    }
    return exit_code;
}

// The store the runs are recorded in, or none with --no-store; the exit code when it cannot be
// opened.
std::variant<std::unique_ptr<RunStore>, int> open_store(const LessonOptions& options) {
    if (options.no_store)
        return std::unique_ptr<RunStore>();
    try {
        auto store = RunStore::open(options.store.empty() ? RunStore::default_path()
                                                          : QString::fromStdString(options.store));
        store->require_sound();
        return store;
    } catch (const StoreError& error) {
        return report_store_error(error, lesson_help_command, lesson_store_advice);
    }
}

// Trains the lesson's runs through a RunController and RunCollection, as the desktop app does
// (queue_lesson(): each lesson run's repeats one group), printing each run's epochs and how it
// ended, each group's spread, and the claims.
int run_command(const LessonOptions& options, const Lesson& lesson) {
    int argc = 1;
    char program[] = "scalelab-cli";
    char* argv[] = {program, nullptr};
    QCoreApplication app(argc, argv);

    auto opened = open_store(options);
    if (const int* code = std::get_if<int>(&opened))
        return *code;
    RunController controller;
    RunCollection collection(controller);
    if (auto& store = std::get<std::unique_ptr<RunStore>>(opened)) {
        try {
            collection.setStore(std::move(store));
        } catch (const StoreError& error) {
            return report_store_error(error, lesson_help_command, lesson_store_advice);
        }
    }
    QObject::connect(&collection, &RunCollection::storeError, &app, [](const QString& message) {
        std::fprintf(stderr, "warning: %s\n", message.toUtf8().constData());
    });

    std::size_t runs = 0;
    for (const LessonRun& run : lesson.runs)
        runs += std::size_t(run.repeats);
    fmt::print("{}: {} run{}\n", text(lesson.title), runs, runs == 1 ? "" : "s");
    if (!lesson.setting_note.isEmpty())
        fmt::print("{}\n", text(lesson.setting_note));
    std::fflush(stdout);

    // Ctrl-C stops the runs, also those being queued; the collection is touched on its own
    // thread only.
    InterruptWatcher interrupt_watcher([&collection](int) {
        QMetaObject::invokeMethod(&collection, [&collection] { collection.stopAll(); });
    });
    QElapsedTimer wall;
    wall.start();
    const LessonRunIds ids =
        queue_lesson(collection, lesson, lesson.title + QStringLiteral(": "), options.seed);
    const std::vector<int> all = all_runs(ids);
    if (all.size() != runs)
        return exit_failed;  // the store could not create a run; storeError said why

    LessonProgress printer(lesson, collection, ids);
    QObject::connect(&collection, &RunCollection::runChanged, &app, [&](int id) {
        printer.runChanged(id);
        if (printer.allEnded())
            app.quit();
    });
    app.exec();

    fmt::print("\n{}: {} run{} in {:.0f} s\n", text(lesson.title), all.size(),
               all.size() == 1 ? "" : "s", double(wall.elapsed()) / 1000.0);
    if (lesson.assessment)
        for (std::size_t i = 0; i < ids.size(); ++i)
            for (const int id : ids[i]) {
                const RunRecord* run = collection.find(id);
                fmt::print("assessment of {}: {}\n",
                           text(lesson_member_name(lesson.runs[i], run->spec.seed)),
                           text(assess(*lesson.assessment, *run).text));
            }
    int exit_code = runs_exit_code(collection, all, interrupt_watcher);
    if (!print_claims(lesson, collection, ids) && exit_code == exit_ok)
        exit_code = exit_failed;
    return exit_code;
}

// What is wrong with --seed for the lesson's repeats (seeds past the largest), one line each.
std::vector<std::string> seed_problems(const LessonOptions& options, const Lesson& lesson) {
    std::vector<std::string> problems;
    if (options.seed)
        for (const LessonRun& run : lesson.runs)
            if (const QString wrong =
                    repeats_problem(QStringLiteral("\"repeats\" of “%1”").arg(run.name),
                                    run.repeats, *options.seed);
                !wrong.isEmpty())
                problems.push_back(text(wrong));
    return problems;
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
    if (const std::vector<std::string> problems = seed_problems(options, *entry.lesson);
        !problems.empty())
        return report_problems(problems, lesson_help_command);
    return run_command(options, *entry.lesson);
}

}  // namespace scalelab::cli
