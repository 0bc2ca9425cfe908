#include "cli/metrics_jsonl_sink.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cli/json_line.h"
#include "time_breakdown.h"
#include "whole_file_writer.h"

namespace scalelab::cli {

namespace {

// {"target":0.85,"seconds":12.3,"step":400,"epoch":3,"images":51200} for each target.
std::vector<JsonLine> reached_objects(const std::vector<TargetReached>& reached) {
    std::vector<JsonLine> objects;
    objects.reserve(reached.size());
    for (const TargetReached& t : reached)
        objects.push_back(JsonLine()
                              .add("target", t.target)
                              .add("seconds", t.seconds)
                              .add("step", t.step)
                              .add("epoch", t.epoch)
                              .add("images", t.images));
    return objects;
}

}  // namespace

MetricsJsonlSink::MetricsJsonlSink(const std::string& path, std::string experiment)
    : path_(path), experiment_(std::move(experiment)) {
    // The checks every file writer makes (an open run store's files above all) before the file
    // is created or truncated.
    if (const QString why = unwritable_reason(QString::fromStdString(path)); !why.isEmpty())
        throw std::runtime_error("cannot write metrics to " + path + ": " + why.toStdString());
    file_.reset(std::fopen(path.c_str(), "w"));
    if (!file_)
        throw std::runtime_error("cannot write metrics to " + path + ": " + std::strerror(errno));
}

void MetricsJsonlSink::on_start(const RunInfo& info) {
    write_row(JsonLine()
                  .add("type", "start")
                  .add("devices", info.devices)
                  .add("threads_per_device", info.threads_per_device)
                  .add("cores", info.cores)
                  .add("global_batch", info.global_batch)
                  .add("steps_per_epoch", info.steps_per_epoch)
                  .add("parameters", std::int64_t(info.parameters))
                  .add("warnings", info.warnings)
                  .add_json("experiment", experiment_)
                  .str());
    flush();
}

void MetricsJsonlSink::on_step(const StepMetrics& m) {
    last_lr_ = m.lr;
    if (!failure_)
        last_step_ = m.step;
    std::vector<JsonLine> devices;
    devices.reserve(m.devices.size());
    for (std::size_t rank = 0; rank < m.devices.size(); ++rank) {
        JsonLine device = JsonLine().add("rank", std::int64_t(rank));
        for (StepPhase phase : all_step_phases)
            device.add(step_phase_key(phase), phase_seconds(m.devices[rank], phase));
        device.add("between_processes", m.devices[rank].between_processes);
        devices.push_back(std::move(device));
    }
    write_row(JsonLine()
                  .add("type", "step")
                  .add("step", m.step)
                  .add("epoch", m.epoch)
                  .add("loss", m.loss)
                  .add("accuracy", m.accuracy)
                  .add("lr", m.lr)
                  .add("images_per_s", m.images_per_s)
                  .add("seconds", m.seconds)
                  .add("noise_scale", m.noise_scale)  // null while not yet known
                  .add("devices", devices)
                  .str());
}

void MetricsJsonlSink::on_epoch(const EpochMetrics& m) {
    write_row(JsonLine()
                  .add("type", "epoch")
                  .add("step", m.step)
                  .add("epoch", m.epoch)
                  .add("loss", m.train_loss)
                  .add("accuracy", m.train_accuracy)
                  .add("lr", last_lr_)
                  .add("images_per_s", m.images_per_s)
                  .add("train_loss", m.train_loss)
                  .add("train_accuracy", m.train_accuracy)
                  .add("val_loss", m.val_loss)
                  .add("val_accuracy", m.val_accuracy)
                  .add("epoch_seconds", m.epoch_seconds)
                  .add("steady_images_per_s", m.steady_images_per_s)
                  .add("other_programs_share", m.other_programs_share)  // null: not measured
                  .add("reached", reached_objects(m.reached))
                  .str());
    flush();
}

void MetricsJsonlSink::on_end(const RunEnd& end) {
    write_row(JsonLine()
                  .add("type", "end")
                  .add("status", to_string(end.status))
                  .add("message", end.message)
                  .add("step", end.step)
                  .add("epoch", end.epoch)
                  .add("targets", reached_objects(end.targets))
                  .str());
    flush();
}

void MetricsJsonlSink::write_row(const std::string& row) {
    if (failure_)
        return;
    if (std::fputs(row.c_str(), file_.get()) == EOF || std::fputc('\n', file_.get()) == EOF)
        fail();
}

void MetricsJsonlSink::flush() {
    if (!failure_ && (std::fflush(file_.get()) != 0 || std::ferror(file_.get())))
        fail();
}

void MetricsJsonlSink::fail() {
    failure_ = "writing the metrics file " + path_ + " failed by step " +
               std::to_string(last_step_) + ": " + std::strerror(errno) +
               "; the file lacks the rows from there on (the run store, when used, has them)";
    spdlog::error("{}", *failure_);
}

}  // namespace scalelab::cli
