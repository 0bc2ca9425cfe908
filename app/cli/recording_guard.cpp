#include "cli/recording_guard.h"

#include "run_recorder.h"
#include "train/trainer.h"

namespace scalelab::cli {

void RecordingGuard::cancel_when_failed() {
    if (trainer_ != nullptr && recorder_.failure())
        trainer_->cancel();
}

void RecordingGuard::on_step(const StepMetrics& step) {
    sinks_.on_step(step);
    cancel_when_failed();
}

void RecordingGuard::on_epoch(const EpochMetrics& epoch) {
    sinks_.on_epoch(epoch);
    cancel_when_failed();
}

void RecordingGuard::on_end(const RunEnd& end) {
    const std::optional<QString> reason = recorder_.failure();
    if (!reason) {
        sinks_.on_end(end);
        return;
    }
    RunEnd failed = end;
    failed.status = RunStatus::Failed;
    failed.message = reason->toStdString();  // it says what failed and what to do
    sinks_.on_end(failed);
}

}  // namespace scalelab::cli
