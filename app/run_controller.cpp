#include "run_controller.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include <QString>

#include <spdlog/spdlog.h>

#include "data/load.h"
#include "run_recorder.h"
#include "train/dataset_request.h"
#include "train/trainer.h"

namespace scalelab {

namespace {

// Turns the trainer's callbacks into the controller's signals. Emitting a signal to a receiver
// in another thread only posts an event, so the trainer never waits on the GUI.
class SignalSink final : public MetricsSink {
  public:
    // Signals carry the controller's `id`; log lines name the run by `shown_id`.
    SignalSink(RunController& controller, int id, int shown_id)
        : controller_(controller), id_(id), shown_id_(shown_id) {}

    void on_start(const RunInfo& info) override {
        spdlog::info(
            "run {}: {} device(s) x {} thread(s), global batch {}, {} steps per epoch, "
            "{} parameters",
            shown_id_, info.devices, info.threads_per_device, info.global_batch,
            info.steps_per_epoch, info.parameters);
        for (const std::string& warning : info.warnings)
            spdlog::warn("run {}: {}", shown_id_, warning);
        emit controller_.runStarted(id_, info);
    }
    void on_step(const StepMetrics& step) override { emit controller_.stepReported(id_, step); }
    void on_epoch(const EpochMetrics& epoch) override {
        spdlog::info("run {}: epoch {}: train loss {:.4f}, val accuracy {:.4f}, {:.0f} images/s",
                     shown_id_, epoch.epoch, epoch.train_loss, epoch.val_accuracy,
                     epoch.images_per_s);
        emit controller_.epochReported(id_, epoch);
    }
    void on_end(const RunEnd& end) override {
        const auto level = end.status == RunStatus::Failed || end.status == RunStatus::Diverged
                               ? spdlog::level::warn
                               : spdlog::level::info;
        spdlog::log(level, "run {} {} at step {}{}{}", shown_id_, to_string(end.status), end.step,
                    end.message.empty() ? "" : ": ", end.message);
        emit controller_.runEnded(id_, end);
    }

  private:
    RunController& controller_;
    int id_;
    int shown_id_;
};

RunEnd ended(RunStatus status, std::string message) {
    RunEnd end;
    end.status = status;
    end.message = std::move(message);
    return end;
}

// Hands every report to the recorder, then to the signals. The end goes to the signals only once
// the store holds it, so that whoever reads the store on hearing of the end finds it there; when
// recording failed (the run was cancelled for it), the end says so.
class RecordingSink final : public MetricsSink {
  public:
    RecordingSink(RunRecorder& recorder, MetricsSink& signal_sink)
        : recorder_(recorder), signals_(signal_sink) {}

    void on_start(const RunInfo& info) override {
        recorder_.on_start(info);
        signals_.on_start(info);
    }
    void on_step(const StepMetrics& step) override {
        recorder_.on_step(step);
        signals_.on_step(step);
    }
    void on_epoch(const EpochMetrics& epoch) override {
        recorder_.on_epoch(epoch);
        signals_.on_epoch(epoch);
    }
    void on_end(const RunEnd& end) override {
        recorder_.on_end(end);
        recorder_.flush();
        // The recorder's message says that recording stopped, and why: no prefix of ours.
        if (const std::optional<QString> failure = recorder_.failure())
            signals_.on_end(ended(RunStatus::Failed, failure->toStdString()));
        else
            signals_.on_end(end);
    }

  private:
    RunRecorder& recorder_;
    MetricsSink& signals_;
};

}  // namespace

void register_run_metatypes() {
    qRegisterMetaType<RunInfo>("scalelab::RunInfo");
    qRegisterMetaType<StepMetrics>("scalelab::StepMetrics");
    qRegisterMetaType<EpochMetrics>("scalelab::EpochMetrics");
    qRegisterMetaType<RunEnd>("scalelab::RunEnd");
}

RunController::RunController(QObject* parent) : QObject(parent) {
    register_run_metatypes();
    worker_ = std::thread([this] { work(); });
}

RunController::~RunController() {
    {
        std::lock_guard lock(mutex_);
        shutting_down_ = true;
        queue_.clear();
        cancel_current_ = true;
        if (trainer_ != nullptr)
            trainer_->cancel();
    }
    wake_.notify_all();
    worker_.join();
}

void RunController::setStorePath(const QString& path) {
    store_path_ = path;
}

int RunController::start(const RunSpec& spec, std::int64_t store_id) {
    return enqueue({spec}, store_id != 0 ? std::vector{store_id} : std::vector<std::int64_t>{})
        .front();
}

std::vector<int> RunController::enqueue(std::vector<RunSpec> specs,
                                        std::vector<std::int64_t> store_ids,
                                        std::vector<int> shown_ids) {
    std::vector<int> ids;
    if (specs.empty())
        return ids;
    {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < specs.size(); ++i) {
            const int id = next_id_++;
            const std::int64_t store_id = i < store_ids.size() ? store_ids[i] : 0;
            queue_.push_back(Job{.id = id,
                                 .spec = std::move(specs[i]),
                                 .store_path = store_id != 0 ? store_path_ : QString(),
                                 .store_id = store_id,
                                 .shown_id = i < shown_ids.size() ? shown_ids[i] : id});
            ids.push_back(id);
        }
    }
    wake_.notify_all();
    emit queueChanged();
    return ids;
}

bool RunController::cancel_if_running(int id) {
    if (id == 0 || id != current_)
        return false;
    cancel_current_ = true;
    if (trainer_ != nullptr)
        trainer_->cancel();
    return true;
}

void RunController::stop(int id) {
    bool removed = false;
    bool cancelled = false;
    int shown_id = id;
    {
        std::lock_guard lock(mutex_);
        if (cancel_if_running(id)) {
            cancelled = true;
            shown_id = current_shown_;
        } else {
            const auto it = std::find_if(queue_.begin(), queue_.end(),
                                         [id](const Job& job) { return job.id == id; });
            if (it != queue_.end()) {
                queue_.erase(it);
                removed = true;
            }
        }
    }
    if (cancelled)
        spdlog::info("run {}: stopping before its next step", shown_id);
    if (removed) {
        emit runEnded(id, ended(RunStatus::Cancelled, "removed from the queue before it started"));
        emit queueChanged();
    }
}

void RunController::stop_all() {
    std::vector<int> ids = queued();
    std::reverse(ids.begin(), ids.end());  // the later ones first, so none starts meanwhile
    for (int id : ids)
        stop(id);
    const int running = current();
    if (running != 0)
        stop(running);
}

void RunController::setTrainerHook(std::function<void(Trainer&)> hook) {
    std::lock_guard lock(mutex_);
    trainer_hook_ = std::move(hook);
}

bool RunController::busy() const {
    std::lock_guard lock(mutex_);
    return current_ != 0 || !queue_.empty();
}

int RunController::current() const {
    std::lock_guard lock(mutex_);
    return current_;
}

std::vector<int> RunController::queued() const {
    std::lock_guard lock(mutex_);
    std::vector<int> ids;
    ids.reserve(queue_.size());
    for (const Job& job : queue_)
        ids.push_back(job.id);
    return ids;
}

bool RunController::current_cancelled() const {
    return cancel_current_ || shutting_down_;
}

void RunController::work() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return shutting_down_ || !queue_.empty(); });
            if (shutting_down_)
                return;
            job = std::move(queue_.front());
            queue_.pop_front();
            current_ = job.id;
            current_shown_ = job.shown_id;
            cancel_current_ = false;
        }
        emit queueChanged();
        execute(job);
        {
            std::lock_guard lock(mutex_);
            current_ = 0;
            cancel_current_ = false;
            trainer_ = nullptr;
        }
        emit queueChanged();
    }
}

void RunController::train(const Job& job, const data::TrainTest& data, MetricsSink& sink) {
    std::optional<Trainer> trainer;
    trainer.emplace(job.spec, data, sink);
    {
        std::lock_guard lock(mutex_);
        if (trainer_hook_)
            trainer_hook_(*trainer);
        trainer_ = &*trainer;
        if (current_cancelled())
            trainer->cancel();
    }
    trainer->run();  // never throws; reports its end through sink.on_end
    std::lock_guard lock(mutex_);
    trainer_ = nullptr;  // before the trainer goes: stop() must not reach it any more
}

void RunController::execute(const Job& job) {
    const auto fail = [&](const std::string& message) {
        spdlog::error("run {} failed: {}", job.shown_id, message);
        emit runEnded(job.id, ended(RunStatus::Failed, message));
    };
    try {
        const std::vector<std::string> problems = job.spec.validate();
        if (!problems.empty()) {
            std::string message;
            for (const std::string& problem : problems)
                message += (message.empty() ? "" : "\n") + problem;
            fail(message);
            return;
        }

        spdlog::info("run {}: loading {}", job.shown_id, job.spec.dataset);
        const data::TrainTest data = data::load_dataset(dataset_request(job.spec));
        bool cancelled = false;
        {
            std::lock_guard lock(mutex_);
            cancelled = current_cancelled();
        }
        if (cancelled) {  // emitted outside the lock: a direct receiver may call back
            emit runEnded(job.id, ended(RunStatus::Cancelled, "cancelled before it started"));
            return;
        }

        SignalSink signal_sink(*this, job.id, job.shown_id);
        if (job.store_id == 0) {
            train(job, data, signal_sink);
            return;
        }
        // From the recorder's thread, when a write to the store fails.
        const auto stop_unrecorded = [this, id = job.id,
                                      shown = job.shown_id](const QString& reason) {
            spdlog::error("run {}: recording failed, stopping the run: {}", shown,
                          reason.toStdString());
            std::lock_guard lock(mutex_);
            cancel_if_running(id);
        };
        RunRecorder recorder(job.store_path, job.store_id, stop_unrecorded);
        RecordingSink sink(recorder, signal_sink);
        train(job, data, sink);
    } catch (const std::exception& error) {
        {
            std::lock_guard lock(mutex_);
            trainer_ = nullptr;
        }
        fail(error.what());
    } catch (...) {
        {
            std::lock_guard lock(mutex_);
            trainer_ = nullptr;
        }
        fail("unknown error");
    }
}

}  // namespace scalelab
