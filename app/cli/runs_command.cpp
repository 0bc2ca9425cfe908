#include "cli/runs_command.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QStringList>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>

#include "cli/exit_codes.h"
#include "cli/json_line.h"
#include "cli/report_problems.h"
#include "cli/runs_options.h"
#include "printable_text.h"
#include "run_collection.h"
#include "run_exchange.h"
#include "run_group.h"
#include "run_store.h"
#include "run_summary.h"

namespace scalelab::cli {

namespace {

constexpr const char* runs_help_command = "scalelab-cli runs --help";

std::string help_command(RunsAction action) {
    return "scalelab-cli runs " + runs_action_name(action) + " --help";
}

QString count_text(std::size_t count, const char* thing) {
    return QStringLiteral("%1 %2%3")
        .arg(count)
        .arg(QLatin1String(thing))
        .arg(count == 1 ? "" : "s");
}

void print(const QString& text) {
    std::fputs(text.toUtf8().constData(), stdout);
}

QString date_text(const QDateTime& time) {
    return time.isValid() ? time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                          : QStringLiteral("-");
}

QString optional_text(const std::optional<double>& value, int decimals) {
    return value ? QString::number(*value, 'f', decimals) : QStringLiteral("-");
}

int global_batch(const RunSpec& spec) {
    return spec.devices * spec.batch * spec.accumulation;
}

// Names longer than this are cut in the table (`runs show` gives the whole name).
constexpr qsizetype name_width = 40;

QString cut(const QString& text, qsizetype width) {
    return text.size() <= width ? text : text.left(width - 1) + QChar(0x2026);  // …
}

// Columns as wide as their widest cell, two spaces apart; numbers aligned to the right.
void print_table(const QStringList& headers, const std::vector<bool>& right_aligned,
                 const std::vector<QStringList>& rows) {
    std::vector<qsizetype> widths;
    for (const QString& header : headers)
        widths.push_back(header.size());
    for (const QStringList& row : rows)
        for (qsizetype c = 0; c < row.size(); ++c)
            widths[c] = std::max(widths[c], row[c].size());
    const auto line = [&](const QStringList& cells) {
        QString text;
        for (qsizetype c = 0; c < cells.size(); ++c) {
            if (c > 0)
                text += QStringLiteral("  ");
            text += right_aligned[c] ? cells[c].rightJustified(widths[c])
                                     : cells[c].leftJustified(widths[c]);
        }
        while (text.endsWith(QLatin1Char(' ')))
            text.chop(1);
        print(text + QLatin1Char('\n'));
    };
    line(headers);
    for (const QStringList& row : rows)
        line(row);
}

// One run of `runs list --json`.
std::string json_row(const StoredRun& run) {
    std::vector<std::string> tags;
    for (const QString& tag : run.tags)
        tags.push_back(tag.toStdString());
    const double nothing = std::numeric_limits<double>::quiet_NaN();  // written as null
    return JsonLine()
        .add("id", run.id)
        .add("name", run.name.toStdString())
        .add("tags", tags)
        .add("group", run.group.toStdString())
        .add("state", to_string(run.state))
        .add("message", run.message.toStdString())
        .add("model", run.spec.model)
        .add("dataset", run.spec.dataset)
        .add("devices", run.spec.devices)
        .add("global_batch", global_batch(run.spec))
        .add("optimizer", to_string(run.spec.optimizer))
        .add("lr", run.spec.lr)
        .add("steps", run.steps)
        .add("epochs", run.epochs)
        .add("best_val_accuracy", run.best_val_accuracy.value_or(nothing))
        .add("images_per_s", run.mean_images_per_s.value_or(nothing))
        .add("created", run.created.toUTC().toString(Qt::ISODateWithMs).toStdString())
        .str();
}

// The table's columns; a number is aligned to the right.
const QStringList list_headers{"id",           "name",      "state",        "model",    "devices",
                               "global batch", "optimizer", "best val acc", "images/s", "created"};
const std::vector<bool> list_right_aligned{true, false, false, false, true,
                                           true, false, true,  true,  false};

QStringList run_row(const StoredRun& run, const QString& indent = {}) {
    return {QString::number(run.id),
            indent + cut(printable(run.name), name_width),
            QString::fromUtf8(to_string(run.state)),
            QString::fromStdString(run.spec.model),
            QString::number(run.spec.devices),
            QString::number(global_batch(run.spec)),
            QString::fromUtf8(to_string(run.spec.optimizer)),
            optional_text(run.best_val_accuracy, 4),
            optional_text(run.mean_images_per_s, 0),
            date_text(run.created)};
}

// A group's line: its first run's configuration, its name and seeds, how its runs ended and
// their spread.
QStringList group_row(const std::vector<const StoredRun*>& members) {
    const auto [summary, label] = stored_group(members);
    QStringList row = run_row(*members.front());
    row[0] = QStringLiteral("%1-%2").arg(members.front()->id).arg(members.back()->id);
    row[1] = cut(printable(label), name_width);
    row[2] = group_ended_text(summary);
    row[7] = figure_text(summary, summary.best_val_accuracy, 4);
    row[8] = figure_text(summary, summary.images_per_s, 0);
    return row;
}

int list_action(const RunStore& store, const RunsOptions& options) {
    const std::vector<StoredRun> runs = store.list_runs();
    if (options.json) {
        for (const StoredRun& run : runs)
            std::puts(json_row(run).c_str());
        return exit_ok;
    }
    if (runs.empty()) {
        print(QStringLiteral("No runs in %1.\n").arg(QDir::toNativeSeparators(store.path())));
        return exit_ok;
    }
    // A group's line stands where its first run would.
    std::map<QString, std::vector<const StoredRun*>> groups;
    for (const StoredRun& run : runs)
        if (!run.group.isEmpty())
            groups[run.group].push_back(&run);
    std::vector<QStringList> rows;
    for (const StoredRun& run : runs) {
        if (run.group.isEmpty()) {
            rows.push_back(run_row(run));
            continue;
        }
        const std::vector<const StoredRun*>& members = groups[run.group];
        if (members.front() != &run)
            continue;
        rows.push_back(group_row(members));
        if (options.expand)
            for (const StoredRun* member : members)
                rows.push_back(run_row(*member, QStringLiteral("  ")));
    }
    print_table(list_headers, list_right_aligned, rows);
    return exit_ok;
}

QString info_text(const RunInfo& info) {
    return QStringLiteral(
               "%1 device%2 x %3 thread%4 on %5 cores, global batch %6, %7 steps per "
               "epoch, %8 parameters")
        .arg(info.devices)
        .arg(info.devices == 1 ? "" : "s")
        .arg(info.threads_per_device)
        .arg(info.threads_per_device == 1 ? "" : "s")
        .arg(info.cores)
        .arg(info.global_batch)
        .arg(info.steps_per_epoch)
        .arg(QLocale(QLocale::English).toString(qulonglong(info.parameters)));
}

int show_action(const RunStore& store, std::int64_t id) {
    const StoredRun run = store.run(id);
    // "  label:         value", values in one column; a value of several lines is indented to it.
    constexpr int label_width = 15;
    const QString indent(2 + label_width + 1, QLatin1Char(' '));
    QStringList lines;
    const auto add = [&](const QString& label, QString value) {
        value.replace(QLatin1Char('\n'), QLatin1Char('\n') + indent);
        lines.append(
            QStringLiteral("  %1 %2").arg(label + QLatin1Char(':'), -label_width).arg(value));
    };
    // Stored text is shown with its control characters escaped (printable()).
    lines.append(QStringLiteral("run %1: %2").arg(run.id).arg(printable(run.name)));
    add(QStringLiteral("state"), QString::fromUtf8(to_string(run.state)));
    if (!run.message.isEmpty())
        add(QStringLiteral("message"), printable(run.message));
    if (!run.tags.isEmpty())
        add(QStringLiteral("tags"), printable(run.tags.join(QStringLiteral(", "))));
    if (!run.group.isEmpty())
        add(QStringLiteral("group"), printable(run.group));
    add(QStringLiteral("created"), date_text(run.created));
    add(QStringLiteral("started"), date_text(run.started_at));
    add(QStringLiteral("ended"), date_text(run.ended_at));
    if (!run.machine.isEmpty())
        add(QStringLiteral("machine"), printable(run.machine));
    if (run.started)
        add(QStringLiteral("devices"), info_text(run.info));
    add(QStringLiteral("configuration"), configuration_summary(run.spec));
    QStringList settings = non_default_settings(run.spec).split(u'\n', Qt::SkipEmptyParts);
    for (QString& setting : settings)
        setting = printable(setting);
    add(QStringLiteral("settings"),
        settings.isEmpty() ? QStringLiteral("all defaults") : settings.join(u'\n'));
    add(QStringLiteral("progress"), QStringLiteral("step %1, %2 epoch%3, %4 of training")
                                        .arg(run.steps)
                                        .arg(run.epochs)
                                        .arg(run.epochs == 1 ? "" : "s")
                                        .arg(duration_text(run.train_seconds)));
    add(QStringLiteral("best val acc"), optional_text(run.best_val_accuracy, 4));
    add(QStringLiteral("images/s"), optional_text(run.mean_images_per_s, 0));
    for (const TargetReached& reached : run.targets)
        add(QStringLiteral("target %1").arg(reached.target),
            QStringLiteral("reached after %1 of training (step %2, epoch %3)")
                .arg(duration_text(reached.seconds))
                .arg(reached.step)
                .arg(reached.epoch));
    print(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
    return exit_ok;
}

int export_action(const RunStore& store, const RunsOptions& options) {
    const QString path = QString::fromStdString(options.file);
    QString error;
    const bool written = options.csv ? save_stored_metrics_csv(store, options.ids, path, &error)
                                     : save_exchange(store, options.ids, path, &error);
    if (!written)
        return report_problems({error.toStdString()}, help_command(RunsAction::Export));
    print(QStringLiteral("exported %1 to %2\n")
              .arg(count_text(options.ids.size(), "run"), QDir::toNativeSeparators(path)));
    return exit_ok;
}

int import_action(RunStore& store, const RunsOptions& options) {
    std::vector<std::int64_t> ids;
    const QString file = QString::fromStdString(options.file);
    try {
        ids = import_any_runs_file(store, file);
    } catch (const ExchangeError& error) {
        return report_problems({options.file + ": " + error.what() + "\nnothing was imported"},
                               help_command(RunsAction::Import));
    }
    for (std::int64_t id : ids)
        print(QStringLiteral("imported run %1: %2\n").arg(id).arg(store.run(id).name));
    return exit_ok;
}

// Only an import creates a store; list, show and export read one as it is: read-only, or
// damaged (what can be read, and the damage said).
StoreAccess store_access(RunsAction action) {
    switch (action) {
        case RunsAction::Import:
            return StoreAccess::CreateIfMissing;
        case RunsAction::Delete:
            return StoreAccess::MustExist;
        case RunsAction::List:
        case RunsAction::Show:
        case RunsAction::Export:
            break;
    }
    return StoreAccess::Read;
}

// After a command that read a damaged store: what is wrong and what can still be read; exit 2.
int report_damage(const RunStore& store, RunsAction action) {
    const StoreDamage& damage = *store.damage();
    return report_problems({QStringLiteral("%1 is damaged (%2): %3; export the runs that can be "
                                           "read and import them into a new store")
                                .arg(QDir::toNativeSeparators(store.path()), damage.problem,
                                     readable_runs_text(damage))
                                .toStdString()},
                           help_command(action));
}

// Before the action: an export checks the whole store, however large (what is exported must be
// whole), an import checks it before it adds to it, and the actions that write find out whether
// another program holds the store's lock before they ask a question or read a file.
void prepare_store(RunStore& store, RunsAction action) {
    if (action == RunsAction::Export)
        store.check_integrity();
    if (action == RunsAction::Import)
        store.require_sound();
    if (action == RunsAction::Import || action == RunsAction::Delete)
        store.check_writable();
}

// Asks on the terminal; true when the answer is yes.
bool confirm_delete(const std::vector<StoredRun>& runs, const QString& store_path) {
    QString question =
        QStringLiteral("Delete %1 from %2?\n")
            .arg(count_text(runs.size(), "run"), QDir::toNativeSeparators(store_path));
    for (const StoredRun& run : runs)
        question += QStringLiteral("  %1  %2\n").arg(run.id).arg(printable(run.name));
    std::fputs((question + QStringLiteral("[y/N] ")).toUtf8().constData(), stderr);
    char answer[16] = {};
    if (std::fgets(answer, sizeof answer, stdin) == nullptr)
        return false;
    const QString reply = QString::fromUtf8(answer).trimmed().toLower();
    return reply == QLatin1String("y") || reply == QLatin1String("yes");
}

int delete_action(RunStore& store, const RunsOptions& options) {
    std::vector<StoredRun> runs;
    for (std::int64_t id : options.ids)
        runs.push_back(store.run(id));
    std::vector<std::string> problems;
    for (const StoredRun& run : runs)
        if (run.state == RunState::Running)
            problems.push_back("run " + std::to_string(run.id) +
                               " is running: stop it first (Ctrl-C in its terminal, or Stop in "
                               "the app)");
    if (!options.yes && isatty(fileno(stdin)) != 1)
        problems.push_back(
            "runs delete asks before deleting, and stdin is not a terminal: give "
            "--yes to delete without asking");
    if (!problems.empty())
        return report_problems(problems, help_command(RunsAction::Delete));
    if (!options.yes && !confirm_delete(runs, store.path())) {
        print(QStringLiteral("nothing deleted\n"));
        return exit_ok;
    }
    store.delete_runs(options.ids);
    print(QStringLiteral("deleted %1\n").arg(count_text(runs.size(), "run")));
    return exit_ok;
}

int run_action(RunStore& store, RunsAction action, const RunsOptions& options) {
    switch (action) {
        case RunsAction::List:
            return list_action(store, options);
        case RunsAction::Show:
            return show_action(store, options.ids.front());
        case RunsAction::Export:
            return export_action(store, options);
        case RunsAction::Import:
            return import_action(store, options);
        case RunsAction::Delete:
            return delete_action(store, options);
    }
    return exit_failed;
}

int parse_and_run(RunsAction action, const std::vector<std::string>& args) {
    const ParsedRunsOptions parsed = parse_runs_options(action, args);
    const RunsOptions& options = parsed.options;
    if (options.help) {
        std::fputs(runs_help(action).c_str(), stdout);
        return exit_ok;
    }
    if (!parsed.problems.empty())
        return report_problems(parsed.problems, help_command(action));
    const QString path =
        options.store.empty() ? RunStore::default_path() : QString::fromStdString(options.store);
    if (options.store.empty() && action == RunsAction::List && !QFileInfo::exists(path)) {
        print(QStringLiteral("No runs recorded yet (there is no run store at %1).\n")
                  .arg(QDir::toNativeSeparators(path)));
        return exit_ok;
    }
    std::unique_ptr<RunStore> store;
    try {
        store = RunStore::open(path, store_access(action));
        prepare_store(*store, action);
        const int code = run_action(*store, action, options);
        return store->damage() ? report_damage(*store, action) : code;
    } catch (const StoreError& error) {
        if (store && store->damage())
            return report_damage(*store, action);
        return report_store_error(error, help_command(action));
    }
}

}  // namespace

StoredGroup stored_group(const std::vector<const StoredRun*>& members) {
    std::vector<RunRecord> records;
    for (const StoredRun* member : members)
        records.push_back(stored_record(*member));
    std::vector<const RunRecord*> pointers;
    for (const RunRecord& record : records)
        pointers.push_back(&record);
    return {group_summary(members.front()->group, pointers), group_label(pointers)};
}

QString figure_text(const GroupSummary& summary, const std::optional<Spread>& spread,
                    int decimals) {
    return spread ? spread_text(*spread, decimals, summary.run_ids.size()) : QStringLiteral("-");
}

int run_runs_command(const std::vector<std::string>& args) {
    if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
        std::fputs(runs_usage().c_str(), stdout);
        return exit_ok;
    }
    const std::string word = args.empty() ? std::string() : args.front();
    const auto action = parse_runs_action(word);
    if (!action)
        return report_problems({"runs takes list, show, export, import or delete (got '" + word +
                                "'): scalelab-cli runs list"},
                               runs_help_command);
    return parse_and_run(*action, std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace scalelab::cli
