#include "run_collection.h"

#include <algorithm>
#include <cmath>

namespace scalelab {

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
}

int RunCollection::insert(RunRecord record) {
    record.id = next_id_++;
    record.colour = next_colour_++;
    if (record.name.isEmpty())
        record.name = QStringLiteral("run %1").arg(record.id);
    // Names are unique, so that legends, exports and the table can be read without colours.
    const QString base = record.name;
    for (int repeat = 2; nameTaken(record.name); ++repeat)
        record.name = QStringLiteral("%1 (%2)").arg(base).arg(repeat);
    if (!record.created.isValid())
        record.created = QDateTime::currentDateTime();
    const int id = record.id;
    runs_.emplace(id, std::move(record));
    order_.push_back(id);
    emit runAdded(id);
    return id;
}

int RunCollection::start(const RunSpec& spec, const QString& name) {
    return enqueue({spec}, {name}).front();
}

std::vector<int> RunCollection::enqueue(const std::vector<RunSpec>& specs,
                                        const std::vector<QString>& names) {
    // Records first, then the controller: its signals are queued, so none can arrive before
    // by_controller_id_ knows the run.
    std::vector<int> ids;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        RunRecord record;
        record.spec = specs[i];
        record.name = i < names.size() ? names[i] : QString();
        ids.push_back(insert(std::move(record)));
    }
    const std::vector<int> controller_ids = controller_.enqueue(specs);
    for (std::size_t i = 0; i < ids.size(); ++i)
        by_controller_id_[controller_ids[i]] = ids[i];
    return ids;
}

int RunCollection::add(RunRecord record) {
    return insert(std::move(record));
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

bool RunCollection::remove(int id) {
    const auto it = runs_.find(id);
    if (it == runs_.end())
        return false;
    if (is_active(it->second.state))
        stop(id);
    std::erase_if(by_controller_id_, [id](const auto& entry) { return entry.second == id; });
    runs_.erase(it);
    std::erase(order_, id);
    if (baseline_ == id)
        setBaseline(0);
    emit runRemoved(id);
    return true;
}

void RunCollection::rename(int id, const QString& name) {
    const auto it = runs_.find(id);
    if (it == runs_.end() || name.trimmed().isEmpty() || it->second.name == name.trimmed())
        return;
    it->second.name = name.trimmed();
    emit runChanged(id);
}

void RunCollection::setVisible(int id, bool visible) {
    const auto it = runs_.find(id);
    if (it == runs_.end() || it->second.visible == visible)
        return;
    it->second.visible = visible;
    emit runChanged(id);
}

void RunCollection::setBaseline(int id) {
    if (id != 0 && !runs_.contains(id))
        return;
    if (baseline_ == id)
        return;
    baseline_ = id;
    emit baselineChanged(id);
}

bool RunCollection::nameTaken(const QString& name) const {
    return std::any_of(runs_.begin(), runs_.end(),
                       [&](const auto& entry) { return entry.second.name == name; });
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
    RunRecord* run = record_for_controller_id(controller_id);
    if (run == nullptr)
        return;
    run->state = run_state(end.status);
    run->message = QString::fromStdString(end.message);
    run->ended = QDateTime::currentDateTime();
    by_controller_id_.erase(controller_id);
    emit runChanged(run->id);
}

}  // namespace scalelab
