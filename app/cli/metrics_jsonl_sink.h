#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "train/metrics.h"

namespace scalelab::cli {

// Writes every metric event as one JSON object per line (the --metrics-out format):
//   {"type":"start","devices","threads_per_device","cores","global_batch","steps_per_epoch",
//    "parameters","warnings":[...],"experiment":{the run's JSON config}}
//   {"type":"step","step","epoch","loss","accuracy","lr","images_per_s","seconds",
//    "noise_scale" (null while unknown),
//    "devices":[{"rank","data","forward","backward","exposed_comm","wait","optimizer",
//    "between_processes"}, ...]}
//    (the devices' times in seconds, one object per device in rank order; between_processes is
//    not a part of the step, see DeviceStepTimes)
//   {"type":"epoch", the same keys as a step but "seconds", "devices" and "noise_scale" ("loss"
//    and "accuracy" of the training epoch, "lr" at its end), "train_loss","train_accuracy",
//    "val_loss","val_accuracy","epoch_seconds","steady_images_per_s","other_programs_share" (the
//    share of the cores other programs used since the run started; null where not measured),
//    "reached":[{"target","seconds","step","epoch","images"}, ...]}
//   {"type":"end","status","message","step","epoch","targets":[ the same objects ]}
// Rows go through stdio's buffer, so a step costs a formatted copy, not a system call; the file
// is flushed at each epoch and at the end, so a reader following the file sees whole epochs.
class MetricsJsonlSink : public MetricsSink {
  public:
    // Creates or truncates `path`; throws std::runtime_error saying why when it cannot or must
    // not (unwritable_reason: a file of a run store this process has open, a folder, ...).
    // `experiment`: the run's JSON config (one line), for `runs import` to read the file back.
    MetricsJsonlSink(const std::string& path, std::string experiment);

    void on_start(const RunInfo&) override;
    void on_step(const StepMetrics&) override;
    void on_epoch(const EpochMetrics&) override;
    void on_end(const RunEnd&) override;

    // Why writing failed (a full disk: "No space left on device"), with the file's name and the
    // step by which it failed; nothing while every row was written. After a failure nothing
    // more is written.
    const std::optional<std::string>& failure() const { return failure_; }

  private:
    void write_row(const std::string& row);
    void flush();
    void fail();

    struct CloseFile {
        void operator()(std::FILE* file) const { std::fclose(file); }
    };

    std::string path_;
    std::string experiment_;
    std::unique_ptr<std::FILE, CloseFile> file_;
    double last_lr_ = 0;          // epoch rows carry the learning rate of the epoch's last step
    std::int64_t last_step_ = 0;  // of the rows written so far
    std::optional<std::string> failure_;
};

}  // namespace scalelab::cli
