#include "soak_plan.h"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>

#include <random>
#include <string>

#include "run_store.h"

namespace scalelab {

namespace {

constexpr int block = 10;  // one diverging and one cancelled run in every ten
constexpr int max_runs = 10000;
constexpr int cancelled_epochs = 100;
constexpr std::uint64_t latest_cancel_step = 8;

RunSpec short_run(int index, std::uint64_t seed) {
    RunSpec spec;
    spec.model = "mlp";
    spec.dataset = "synthetic";
    spec.synthetic_train = 384;
    spec.synthetic_test = 64;
    spec.batch = 16;
    spec.epochs = 2;
    spec.devices = 1 + index % 4;
    spec.threads = 1;
    spec.targets = {};  // no early stop: a finished run trains every epoch
    spec.seed = seed + std::uint64_t(index);
    return spec;
}

QString state_text(RunState state) {
    return QString::fromUtf8(to_string(state));
}

// What is wrong with one stored run of the plan.
void check_stored_run(const RunStore& store, const StoredRun& run, const SoakRun& planned,
                      const QString& which, std::vector<QString>& problems) {
    if (run.state != planned.expected)
        problems.push_back(QStringLiteral("%1 is %2, planned %3")
                               .arg(which, state_text(run.state), state_text(planned.expected)));
    if (run.spec.devices != planned.spec.devices)
        problems.push_back(QStringLiteral("%1 has %2 devices, planned %3")
                               .arg(which)
                               .arg(run.spec.devices)
                               .arg(planned.spec.devices));
    std::int64_t loss_rows = 0;
    int accuracy_rows = 0;
    for (const MetricRow& row : store.metrics(run.id)) {
        loss_rows += row.metric == Metric::TrainLoss ? 1 : 0;
        accuracy_rows += row.metric == Metric::ValAccuracy ? 1 : 0;
    }
    if (run.steps < 1)
        problems.push_back(QStringLiteral("%1 recorded no step").arg(which));
    else if (loss_rows != run.steps)
        problems.push_back(QStringLiteral("%1 has %2 train-loss rows for the %3 steps it took")
                               .arg(which)
                               .arg(loss_rows)
                               .arg(run.steps));
    if (planned.expected == RunState::Finished) {
        const std::int64_t all_steps = std::int64_t(run.info.steps_per_epoch) * run.spec.epochs;
        if (run.steps != all_steps)
            problems.push_back(QStringLiteral("%1 took %2 of its %3 steps")
                                   .arg(which)
                                   .arg(run.steps)
                                   .arg(all_steps));
        if (accuracy_rows != run.spec.epochs)
            problems.push_back(QStringLiteral("%1 has %2 validation-accuracy rows for %3 epochs")
                                   .arg(which)
                                   .arg(accuracy_rows)
                                   .arg(run.spec.epochs));
    }
    if (planned.expected == RunState::Cancelled && run.steps < planned.cancel_at_step)
        problems.push_back(QStringLiteral("%1 stopped at step %2, before step %3 that stopped it")
                               .arg(which)
                               .arg(run.steps)
                               .arg(planned.cancel_at_step));
}

double mebibytes(std::size_t bytes) {
    return double(bytes) / (1024.0 * 1024.0);
}

}  // namespace

std::vector<SoakRun> soak_plan(int runs, std::uint64_t seed) {
    std::vector<SoakRun> plan;
    for (int i = 0; i < runs; ++i)
        plan.push_back({.spec = short_run(i, seed), .expected = RunState::Finished});
    // Raw mt19937_64 draws, not a distribution: std::uniform_int_distribution differs between
    // standard libraries, and the plan must be the same everywhere.
    std::mt19937_64 draw(seed);
    for (int start = 0; start + block <= runs; start += block) {
        const int diverging = start + int(draw() % block);
        int cancelled = start + int(draw() % (block - 1));
        if (cancelled >= diverging)
            ++cancelled;
        plan[std::size_t(diverging)].spec.lr = 1e6;
        plan[std::size_t(diverging)].expected = RunState::Diverged;
        SoakRun& stopped = plan[std::size_t(cancelled)];
        stopped.spec.epochs = cancelled_epochs;
        stopped.expected = RunState::Cancelled;
        stopped.cancel_at_step = std::int64_t(1 + draw() % latest_cancel_step);
    }
    return plan;
}

std::vector<QString> soak_store_problems(const RunStore& store, const std::vector<SoakRun>& plan) {
    const std::vector<StoredRun> listed = store.list_runs();
    if (listed.size() != plan.size())
        return {QStringLiteral("the store lists %1 runs, not the %2 planned")
                    .arg(listed.size())
                    .arg(plan.size())};
    std::vector<QString> problems;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const QString which = QStringLiteral("run %1 of %2 (store id %3)")
                                  .arg(i + 1)
                                  .arg(plan.size())
                                  .arg(listed[i].id);
        check_stored_run(store, listed[i], plan[i], which, problems);
    }
    return problems;
}

std::size_t resident_bytes() {
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly))
        return 0;
    // "size resident shared ...", in pages.
    const QList<QByteArray> fields = statm.readAll().split(' ');
    if (fields.size() < 2)
        return 0;
    return std::size_t(fields[1].toULongLong()) * std::size_t(sysconf(_SC_PAGESIZE));
}

std::size_t heap_in_use_bytes() {
#if defined(__GLIBC__)
    const struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

std::optional<double> memory_growth_percent(const std::vector<std::size_t>& resident_after) {
    if (resident_after.size() <= std::size_t(soak_reference_run))
        return std::nullopt;
    const double reference = double(resident_after[soak_reference_run - 1]);
    return (double(resident_after.back()) - reference) / reference * 100.0;
}

std::optional<SoakOptions> parse_soak_options(const QCoreApplication& app,
                                              const QString& description) {
    QCommandLineParser parser;
    parser.setApplicationDescription(description);
    const QCommandLineOption help_option = parser.addHelpOption();
    const QCommandLineOption runs_option(
        QStringLiteral("runs"), QStringLiteral("Runs in the queue (1 to %1).").arg(max_runs),
        QStringLiteral("N"), QStringLiteral("100"));
    const QCommandLineOption seed_option(
        QStringLiteral("seed"),
        QStringLiteral("Draws which runs diverge and which are cancelled, and when."),
        QStringLiteral("S"), QStringLiteral("1"));
    const QCommandLineOption store_option(
        QStringLiteral("store"),
        QStringLiteral("The new run store to record into, kept afterwards (default: a temporary "
                       "one)."),
        QStringLiteral("FILE"));
    parser.addOptions({runs_option, seed_option, store_option});
    const auto refuse = [&app](const QString& problem) {
        std::fprintf(stderr, "error: %s (%s --help)\n", qPrintable(problem),
                     qPrintable(QFileInfo(app.applicationFilePath()).fileName()));
        return std::nullopt;
    };
    if (!parser.parse(app.arguments()))
        return refuse(parser.errorText());
    if (parser.isSet(help_option))
        parser.showHelp(soak_passed);
    if (!parser.positionalArguments().isEmpty())
        return refuse(QStringLiteral("unexpected “%1”: every setting is an option")
                          .arg(parser.positionalArguments().join(u' ')));

    SoakOptions options;
    bool ok = false;
    const QString runs = parser.value(runs_option);
    options.runs = runs.toInt(&ok);
    if (!ok || options.runs < 1 || options.runs > max_runs)
        return refuse(QStringLiteral("--runs must be a whole number from 1 to %1, not “%2”")
                          .arg(max_runs)
                          .arg(runs));
    const QString seed = parser.value(seed_option);
    options.seed = seed.toULongLong(&ok);
    if (!ok)
        return refuse(
            QStringLiteral("--seed must be a whole number from 0 up, not “%1”").arg(seed));
    options.store = parser.value(store_option);
    if (!options.store.isEmpty() && QFileInfo::exists(options.store))
        return refuse(QStringLiteral("--store: %1 exists; the soak records into a new store, so "
                                     "name a file that does not exist yet")
                          .arg(options.store));
    return options;
}

void record_memory(SoakOutcome& outcome) {
    outcome.resident_after.push_back(resident_bytes());
    outcome.heap_after.push_back(heap_in_use_bytes());
}

int report_soak(const SoakOutcome& outcome, std::FILE* out) {
    const std::size_t runs = outcome.resident_after.size();
    std::fprintf(out, "runs                     %zu\n", runs);
    std::fprintf(out, "wall time                %.1f s\n", outcome.wall_seconds);
    const auto print_memory = [&](const char* what, const std::vector<std::size_t>& after) {
        std::fprintf(out, "%-24s", (std::string(what) + ", every tenth").c_str());
        for (std::size_t i = soak_reference_run - 1; i < after.size(); i += soak_reference_run)
            std::fprintf(out, " %.1f", mebibytes(after[i]));
        std::fprintf(out, " MiB\n");
        const std::optional<double> growth = memory_growth_percent(after);
        if (!growth) {
            std::fprintf(out, "%s growth: needs more than %d runs\n", what, soak_reference_run);
            return growth;
        }
        std::fprintf(out, "%s after run %d: %.1f MiB, after run %zu: %.1f MiB, growth %+.1f %%\n",
                     what, soak_reference_run, mebibytes(after[soak_reference_run - 1]),
                     after.size(), mebibytes(after.back()), *growth);
        return growth;
    };
    const std::optional<double> growth = print_memory("resident", outcome.resident_after);
    print_memory("heap in use", outcome.heap_after);
    for (const QString& problem : outcome.problems)
        std::fprintf(out, "problem: %s\n", qPrintable(problem));
    int exit_code = soak_passed;
    if (!outcome.problems.empty())
        exit_code = soak_wrong_runs;
    else if (growth && *growth > soak_growth_limit_percent)
        exit_code = soak_memory_growth;
    if (exit_code == soak_memory_growth)
        std::fprintf(out, "FAIL: resident memory grew more than %.0f %%\n",
                     soak_growth_limit_percent);
    else
        std::fprintf(out, "%s\n", exit_code == soak_passed ? "PASS" : "FAIL");
    std::fflush(out);
    return exit_code;
}

}  // namespace scalelab
