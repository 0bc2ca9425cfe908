#include "cli/metrics_jsonl_sink.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "cli/json_line.h"

namespace scalelab::cli {

MetricsJsonlSink::MetricsJsonlSink(const std::string& path)
    : path_(path), file_(std::fopen(path.c_str(), "w")) {
    if (!file_)
        throw std::runtime_error("cannot write metrics to " + path + ": " + std::strerror(errno));
}

void MetricsJsonlSink::on_step(const StepMetrics& m) {
    last_lr_ = m.lr;
    write_row(JsonLine()
                  .add("type", "step")
                  .add("step", m.step)
                  .add("epoch", m.epoch)
                  .add("loss", m.loss)
                  .add("accuracy", m.accuracy)
                  .add("lr", m.lr)
                  .add("images_per_s", m.images_per_s)
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
                  .str());
    std::fflush(file_.get());
}

void MetricsJsonlSink::on_end(const RunEnd& end) {
    write_row(JsonLine()
                  .add("type", "end")
                  .add("status", to_string(end.status))
                  .add("message", end.message)
                  .add("step", end.step)
                  .add("epoch", end.epoch)
                  .str());
    if (std::fflush(file_.get()) != 0 || std::ferror(file_.get()))
        spdlog::error("writing metrics to {} failed: {}", path_, std::strerror(errno));
}

void MetricsJsonlSink::write_row(const std::string& row) {
    std::fputs(row.c_str(), file_.get());
    std::fputc('\n', file_.get());
}

}  // namespace scalelab::cli
