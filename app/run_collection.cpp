#include "run_collection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "repeats.h"
#include "run_store.h"
#include "run_summary.h"

namespace scalelab {

namespace {

// A name told apart by its differing settings stays this short (a legend line); a longer one
// falls back to "(repeat N)".
constexpr qsizetype max_told_apart_name = 120;

// Copies what the store's list says about a run into its record; true when anything shown
// changed.
bool apply_stored(RunRecord& run, const StoredRun& stored) {
    bool changed = false;
    const auto set = [&changed](auto& field, const auto& value) {
        if (field != value) {
            field = value;
            changed = true;
        }
    };
    set(run.name, stored.name);
    set(run.tags, stored.tags);
    set(run.group, stored.group);
    set(run.state, stored.state);
    set(run.message, stored.message);
    set(run.ended, stored.ended_at);
    set(run.step, stored.steps);
    set(run.epoch, stored.epochs);
    set(run.train_seconds, stored.train_seconds);
    set(run.stored_best_val_accuracy, stored.best_val_accuracy);
    set(run.stored_mean_images_per_s, stored.mean_images_per_s);
    set(run.stored_other_programs_share, stored.other_programs_share);
    if (run.started != stored.started) {
        run.started = stored.started;
        run.info = stored.info;
        changed = true;
    }
    if (run.targets.size() != stored.targets.size()) {
        run.targets = stored.targets;
        changed = true;
    }
    return changed;
}

}  // namespace

RunRecord stored_record(const StoredRun& stored) {
    RunRecord run;
    run.id = int(stored.id);
    run.spec = stored.spec;
    run.created = stored.created;
    run.curves_loaded = false;
    run.visible = false;
    apply_stored(run, stored);
    return run;
}

namespace {

StoredRun stored_run(const RunRecord& run) {
    StoredRun stored;
    stored.name = run.name;
    stored.tags = run.tags;
    stored.group = run.group;
    stored.spec = run.spec;
    stored.state = run.state;
    stored.message = run.message;
    stored.info = run.info;
    stored.started = run.started;
    stored.created = run.created;
    stored.ended_at = run.ended;
    stored.steps = run.step;
    stored.epochs = run.epoch;
    stored.train_seconds = run.train_seconds;
    stored.best_val_accuracy = run.best_val_accuracy();
    stored.mean_images_per_s = run.mean_images_per_s();
    stored.other_programs_share = run.other_programs_share();
    stored.targets = run.targets;
    return stored;
}

std::vector<MetricRow> metric_rows(const RunRecord& run) {
    std::vector<MetricRow> rows;
    for (const Metric metric : all_metrics)
        for (const MetricPoint& point : run.curve(metric))
            rows.push_back({point.step, point.epoch, point.seconds, metric, point.value});
    return rows;
}

}  // namespace

RunCollection::RunCollection(RunController& controller, QObject* parent)
    : QObject(parent), controller_(controller) {
    // Queued: the controller emits from its own threads; these slots run here, in our thread's
    // event loop, so the trainer never waits on a view.
    connect(&controller_, &RunController::runStarted, this, &RunCollection::on_started,
            Qt::QueuedConnection);
    connect(&controller_, &RunController::stepReported, this, &RunCollection::on_step,
            Qt::QueuedConnection);
    connect(&controller_, &RunController::epochReported, this, &RunCollection::on_epoch,
            Qt::QueuedConnection);
    connect(&controller_, &RunController::runEnded, this, &RunCollection::on_ended,
            Qt::QueuedConnection);
    poll_timer_.setInterval(poll_interval_ms);
    connect(&poll_timer_, &QTimer::timeout, this, &RunCollection::refresh);
}

RunCollection::~RunCollection() = default;

bool RunCollection::setStore(std::unique_ptr<RunStore> store) {
    if (busy())
        return false;
    std::vector<StoredRun> listed;
    std::int64_t change = -1;
    if (store != nullptr) {
        change = store->change_counter();
        listed = store->list_runs();
    }
    for (const int id : std::vector<int>(order_))
        forget(id);
    store_ = std::move(store);
    seen_change_ = change;
    last_poll_error_.clear();
    controller_.setStorePath(store_ != nullptr ? store_->path() : QString());
    for (const StoredRun& stored : listed)
        insert(stored_record(stored));
    if (store_ != nullptr)
        poll_timer_.start();
    else
        poll_timer_.stop();
    emit storeChanged();
    return true;
}

void RunCollection::insert(RunRecord record) {
    record.colour = next_colour_++;
    if (!record.created.isValid())
        record.created = QDateTime::currentDateTime();
    const int id = record.id;
    runs_.emplace(id, std::move(record));
    order_.push_back(id);
    emit runAdded(id);
}

QString RunCollection::unique_name(const QString& name, const RunSpec* spec) const {
    // Names are unique, so that legends, exports and the table can be read without colours.
    if (!nameTaken(name))
        return name;
    QString told_apart = name;
    if (const RunRecord* named = findNamed(name); spec != nullptr && named != nullptr) {
        QStringList differences;
        for (const auto& [key, value] : differing_settings(*spec, named->spec))
            differences.append(QStringLiteral("%1 %2").arg(key, value));
        // Three differences at most, and a name that still fits a legend.
        const QString longer =
            QStringLiteral("%1, %2").arg(name, differences.mid(0, 3).join(QStringLiteral(", ")));
        if (!differences.isEmpty() && longer.size() <= max_told_apart_name)
            told_apart = longer;
    }
    const QString repeat_format =
        spec != nullptr ? QStringLiteral("%1 (repeat %2)") : QStringLiteral("%1 (%2)");
    QString unique = told_apart;
    for (int repeat = 2; nameTaken(unique); ++repeat)
        unique = repeat_format.arg(told_apart).arg(repeat);
    return unique;
}

QString RunCollection::default_name(int id) const {
    return unique_name(QStringLiteral("run %1").arg(id));
}

int RunCollection::start(const RunSpec& spec, const QString& name) {
    const std::vector<int> ids = enqueue({spec}, {name});
    return ids.empty() ? 0 : ids.front();
}

std::vector<int> RunCollection::enqueueRepeats(const std::vector<RunSpec>& points,
                                               const std::vector<QString>& names, int repeats) {
    std::vector<RunSpec> specs;
    std::vector<QString> repeated_names, groups;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const QString group = repeats > 1 ? new_group_id() : QString();
        for (RunSpec& spec : repeat_specs(points[i], repeats)) {
            specs.push_back(std::move(spec));
            repeated_names.push_back(i < names.size() ? names[i] : QString());
            groups.push_back(group);
        }
    }
    return enqueue(specs, repeated_names, groups);
}

std::vector<int> RunCollection::enqueue(const std::vector<RunSpec>& specs,
                                        const std::vector<QString>& names,
                                        const std::vector<QString>& groups) {
    // Records first, then the controller: its signals are queued, so none can arrive before
    // by_controller_id_ knows the run.
    std::vector<int> ids;
    std::vector<RunSpec> queued;
    std::vector<std::int64_t> store_ids;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        RunRecord record;
        record.spec = specs[i];
        record.group = i < groups.size() ? groups[i] : QString();
        const QString name = i < names.size() ? names[i].trimmed() : QString();
        if (store_ != nullptr) {
            try {
                record.name = name.isEmpty() ? QString() : unique_name(name, &record.spec);
                const std::int64_t store_id =
                    store_->create_run(record.spec, record.name, {}, record.group);
                record.id = int(store_id);
                if (name.isEmpty()) {  // the store named it "run <id>", unless that is taken
                    record.name = default_name(record.id);
                    if (record.name != QStringLiteral("run %1").arg(record.id))
                        store_->rename(store_id, record.name);
                }
                store_ids.push_back(store_id);
            } catch (const StoreError& error) {
                report_store_error(tr("The run store cannot create the run, so it was not "
                                      "started"),
                                   error);
                continue;
            }
        } else {
            record.id = next_id_++;
            record.name =
                name.isEmpty() ? default_name(record.id) : unique_name(name, &record.spec);
        }
        ids.push_back(record.id);
        queued.push_back(record.spec);
        insert(std::move(record));
    }
    const std::vector<int> controller_ids = controller_.enqueue(queued, store_ids, ids);
    for (std::size_t i = 0; i < ids.size(); ++i)
        by_controller_id_[controller_ids[i]] = ids[i];
    return ids;
}

int RunCollection::add(RunRecord record) {
    const QString name = record.name.trimmed();
    record.name = name.isEmpty() ? QString() : unique_name(name, &record.spec);
    record.curves_loaded = true;
    if (store_ != nullptr) {
        try {
            record.id = int(store_->insert_run(stored_run(record), metric_rows(record)));
            if (name.isEmpty()) {
                record.name = default_name(record.id);
                store_->rename(record.id, record.name);
            }
        } catch (const StoreError& error) {
            report_store_error(tr("The run store cannot add “%1”").arg(record.name), error);
            return 0;
        }
    } else {
        record.id = next_id_++;
        if (name.isEmpty())
            record.name = default_name(record.id);
    }
    const int id = record.id;
    insert(std::move(record));
    return id;
}

void RunCollection::stop(int id) {
    for (const auto& [controller_id, ours] : by_controller_id_)
        if (ours == id) {
            controller_.stop(controller_id);
            return;
        }
}

void RunCollection::stopAll() {
    controller_.stop_all();
}

bool RunCollection::runs_here(int id) const {
    return std::any_of(by_controller_id_.begin(), by_controller_id_.end(),
                       [id](const auto& entry) { return entry.second == id; });
}

bool RunCollection::remove(int id) {
    const auto it = runs_.find(id);
    if (it == runs_.end())
        return false;
    if (runs_here(id)) {
        stop(id);
        const auto entry =
            std::find_if(by_controller_id_.begin(), by_controller_id_.end(),
                         [id](const auto& candidate) { return candidate.second == id; });
        // Its recorder writes until the run stops: the stored run goes once it has ended.
        if (store_ != nullptr)
            delete_when_ended_.insert(*entry);
        by_controller_id_.erase(entry);
    } else if (store_ != nullptr) {
        try {
            store_->delete_runs({id});
        } catch (const StoreError& error) {
            report_store_error(tr("The run store cannot delete “%1”").arg(it->second.name), error);
            return false;
        }
    }
    forget(id);
    return true;
}

void RunCollection::forget(int id) {
    runs_.erase(id);
    std::erase(order_, id);
    if (baseline_ == id)
        setBaseline(0);
    emit runRemoved(id);
}

void RunCollection::rename(int id, const QString& name) {
    const auto it = runs_.find(id);
    const QString trimmed = name.trimmed();
    if (it == runs_.end() || trimmed.isEmpty() || it->second.name == trimmed)
        return;
    if (store_ != nullptr) {
        try {
            store_->rename(id, trimmed);
        } catch (const StoreError& error) {
            report_store_error(tr("The run store cannot rename “%1”").arg(it->second.name), error);
            return;
        }
    }
    it->second.name = trimmed;
    emit runChanged(id);
}

void RunCollection::setTags(int id, const QStringList& tags) {
    const auto it = runs_.find(id);
    if (it == runs_.end())
        return;
    QStringList cleaned;
    for (const QString& tag : tags)
        if (!tag.trimmed().isEmpty() && !cleaned.contains(tag.trimmed()))
            cleaned << tag.trimmed();
    if (it->second.tags == cleaned)
        return;
    if (store_ != nullptr) {
        try {
            store_->set_tags(id, cleaned);
        } catch (const StoreError& error) {
            report_store_error(tr("The run store cannot tag “%1”").arg(it->second.name), error);
            return;
        }
    }
    it->second.tags = cleaned;
    emit runChanged(id);
}

void RunCollection::setVisible(int id, bool visible) {
    const auto it = runs_.find(id);
    if (it == runs_.end() || it->second.visible == visible)
        return;
    if (visible && !loadCurves(id))
        return;
    it->second.visible = visible;
    emit runChanged(id);
}

bool RunCollection::loadCurves(int id) {
    const auto it = runs_.find(id);
    if (it == runs_.end())
        return false;
    RunRecord& run = it->second;
    if (run.curves_loaded)
        return true;
    if (store_ == nullptr)
        return false;
    try {
        read_curves(run);
    } catch (const StoreError& error) {
        report_store_error(tr("Cannot load the curves of “%1”").arg(run.name), error);
        return false;
    }
    emit curvesChanged(id);
    emit runChanged(id);
    return true;
}

void RunCollection::read_curves(RunRecord& run) {
    RunRecord loaded = store_->load_record(run.id);
    run.curves = std::move(loaded.curves);
    run.epochs = std::move(loaded.epochs);
    run.targets = std::move(loaded.targets);
    run.info = std::move(loaded.info);
    run.started = loaded.started;
    run.step = loaded.step;
    run.epoch = loaded.epoch;
    run.train_seconds = loaded.train_seconds;
    run.curves_loaded = true;
}

void RunCollection::setBaseline(int id) {
    if (id != 0 && !runs_.contains(id))
        return;
    if (baseline_ == id)
        return;
    baseline_ = id;
    emit baselineChanged(id);
}

void RunCollection::refresh() {
    if (store_ == nullptr)
        return;
    try {
        // A process killed while it ran commits nothing more, so the counter below would not
        // show it: look for dead recorders while a run of another process is active.
        const bool watching_others =
            std::any_of(runs_.begin(), runs_.end(), [&](const auto& entry) {
                return is_active(entry.second.state) && !runs_here(entry.first);
            });
        if (watching_others)
            store_->mark_interrupted_runs();
        // Read before listing: a commit in between is seen at the next look.
        const std::int64_t change = store_->change_counter();
        if (change == seen_change_)
            return;
        sync(store_->list_runs());
        seen_change_ = change;
        last_poll_error_.clear();
    } catch (const StoreError& error) {
        // Once, not every second while the store stays unreadable.
        if (last_poll_error_ != QString::fromUtf8(error.what())) {
            last_poll_error_ = QString::fromUtf8(error.what());
            report_store_error(tr("Cannot read the run store"), error);
        }
    }
}

void RunCollection::sync(const std::vector<StoredRun>& listed) {
    std::set<int> present;
    for (const StoredRun& stored : listed) {
        const int id = int(stored.id);
        present.insert(id);
        // Runs recorded here report through the controller, and deleted ones are going.
        if (runs_here(id) || deleting(id))
            continue;
        const auto it = runs_.find(id);
        if (it == runs_.end()) {
            insert(stored_record(stored));
            // A run training elsewhere right now is shown, to be watched as it trains; ended
            // ones (imports, runs that ended between two looks) come hidden like the rest.
            if (is_active(stored.state))
                setVisible(id, true);
            continue;
        }
        RunRecord& run = it->second;
        const bool was_active = is_active(run.state);
        const bool changed = apply_stored(run, stored);
        bool curves = false;
        if (run.curves_loaded && was_active) {
            if (is_active(run.state)) {
                curves = append_new_metrics(run);
            } else {
                read_curves(run);  // once at its end: epochs and every last point
                curves = true;
            }
        }
        if (curves)
            emit curvesChanged(id);
        if (changed || curves)
            emit runChanged(id);
    }
    for (const int id : std::vector<int>(order_))
        if (!present.contains(id) && !runs_here(id))
            forget(id);  // deleted by another process
}

bool RunCollection::append_new_metrics(RunRecord& run) {
    std::int64_t last = 0;
    for (const auto& curve : run.curves)
        if (!curve.empty())
            last = std::max(last, curve.back().step);
    // A step's rows may come in two transactions (its training rows, then the epoch's
    // validation rows at the same step): read from that step on and keep what each curve lacks.
    const std::vector<MetricRow> rows =
        store_->metrics(run.id, std::max<std::int64_t>(0, last - 1));
    bool appended = false;
    for (const MetricRow& row : rows) {
        std::vector<MetricPoint>& curve = run.curve(row.metric);
        if (!curve.empty() && row.step <= curve.back().step)
            continue;
        const double samples = double(row.step) * double(run.info.global_batch);
        curve.push_back({row.step, row.epoch, samples, row.wall_time, row.value});
        appended = true;
    }
    return appended;
}

bool RunCollection::deleting(int id) const {
    return std::any_of(delete_when_ended_.begin(), delete_when_ended_.end(),
                       [id](const auto& entry) { return entry.second == id; });
}

void RunCollection::record_end(const RunRecord& run) {
    try {
        if (is_active(store_->run(run.id).state))
            store_->mark_ended(run.id, run.state, run.message);
    } catch (const StoreError& error) {
        report_store_error(tr("The run store cannot record how “%1” ended").arg(run.name), error);
    }
}

void RunCollection::report_store_error(const QString& what, const std::exception& error) {
    const QString message = QStringLiteral("%1: %2").arg(what, QString::fromUtf8(error.what()));
    spdlog::error("{}", message.toStdString());
    emit storeError(message);
}

const RunRecord* RunCollection::findNamed(const QString& name) const {
    const auto named = std::find_if(runs_.begin(), runs_.end(),
                                    [&](const auto& entry) { return entry.second.name == name; });
    return named == runs_.end() ? nullptr : &named->second;
}

bool RunCollection::nameTaken(const QString& name) const {
    return findNamed(name) != nullptr;
}

const RunRecord* RunCollection::find(int id) const {
    const auto it = runs_.find(id);
    return it == runs_.end() ? nullptr : &it->second;
}

int RunCollection::activeCount() const {
    return int(std::count_if(runs_.begin(), runs_.end(),
                             [](const auto& entry) { return is_active(entry.second.state); }));
}

RunRecord* RunCollection::record_for_controller_id(int controller_id) {
    const auto ours = by_controller_id_.find(controller_id);
    if (ours == by_controller_id_.end())
        return nullptr;  // removed while its signals were in flight
    const auto it = runs_.find(ours->second);
    return it == runs_.end() ? nullptr : &it->second;
}

void RunCollection::on_started(int controller_id, const RunInfo& info) {
    RunRecord* run = record_for_controller_id(controller_id);
    if (run == nullptr)
        return;
    run->info = info;
    run->started = true;
    run->state = RunState::Running;
    emit runChanged(run->id);
}

void RunCollection::on_step(int controller_id, const StepMetrics& step) {
    RunRecord* run = record_for_controller_id(controller_id);
    if (run == nullptr)
        return;
    run->step = step.step;
    run->epoch = step.epoch;
    run->timings.push_back({step.step, run->train_seconds, step.seconds, step.devices});
    run->train_seconds += step.seconds;
    const double samples = double(step.step) * double(run->info.global_batch);
    const auto add = [&](Metric metric, double value) {
        run->curve(metric).push_back({step.step, step.epoch, samples, run->train_seconds, value});
    };
    add(Metric::TrainLoss, step.loss);
    add(Metric::TrainAccuracy, step.accuracy);
    add(Metric::LearningRate, step.lr);
    add(Metric::ImagesPerSecond, step.images_per_s);
    if (!std::isnan(step.noise_scale))
        add(Metric::NoiseScale, step.noise_scale);
    emit curvesChanged(run->id);
}

void RunCollection::on_epoch(int controller_id, const EpochMetrics& epoch) {
    RunRecord* run = record_for_controller_id(controller_id);
    if (run == nullptr)
        return;
    const double samples = double(epoch.step) * double(run->info.global_batch);
    run->curve(Metric::ValLoss)
        .push_back({epoch.step, epoch.epoch, samples, run->train_seconds, epoch.val_loss});
    run->curve(Metric::ValAccuracy)
        .push_back({epoch.step, epoch.epoch, samples, run->train_seconds, epoch.val_accuracy});
    run->targets.insert(run->targets.end(), epoch.reached.begin(), epoch.reached.end());
    run->epochs.push_back(epoch);
    emit curvesChanged(run->id);
    emit runChanged(run->id);
}

void RunCollection::on_ended(int controller_id, const RunEnd& end) {
    if (const auto removed = delete_when_ended_.find(controller_id);
        removed != delete_when_ended_.end()) {
        const int id = removed->second;
        delete_when_ended_.erase(removed);
        try {
            store_->delete_runs({id});
        } catch (const StoreError& error) {
            report_store_error(tr("The run store cannot delete run %1").arg(id), error);
        }
        return;
    }
    RunRecord* run = record_for_controller_id(controller_id);
    if (run == nullptr)
        return;
    run->state = run_state(end.status);
    run->message = QString::fromStdString(end.message);
    run->ended = QDateTime::currentDateTime();
    by_controller_id_.erase(controller_id);
    if (store_ != nullptr)
        record_end(*run);
    emit runChanged(run->id);
}

}  // namespace scalelab
