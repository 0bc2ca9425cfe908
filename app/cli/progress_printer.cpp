#include "cli/progress_printer.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "run_record.h"

namespace scalelab::cli {

namespace {

constexpr auto redraw_interval = std::chrono::milliseconds(100);
constexpr int bar_width = 20;

std::string clock_text(double seconds) {
    const long total = std::lround(std::max(0.0, seconds));
    if (total >= 3600)
        return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
    return fmt::format("{}:{:02}", total / 60, total % 60);
}

// "1,234,567": parameter counts are easier to read in groups.
std::string grouped(std::size_t n) {
    std::string digits = std::to_string(n);
    for (std::ptrdiff_t i = std::ptrdiff_t(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(std::size_t(i), ",");
    return digits;
}

std::string plural(long long n, const char* word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// "sgd, lr 0.05", or with a scaling rule "lars, lr 0.05 x linear(512/256) = 0.1".
std::string optimiser_text(const RunSpec& spec) {
    std::string text = fmt::format("{}, lr {}", to_string(spec.optimizer), spec.lr);
    if (spec.lr_scaling != LrScaling::None) {
        const long long global_batch =
            static_cast<long long>(spec.devices) * spec.batch * spec.accumulation;
        text += fmt::format(" x {}({}/{}) = {:.6g}", to_string(spec.lr_scaling), global_batch,
                            spec.reference_batch, effective_lr(spec));
    }
    return text;
}

// "0.85 at 12.3 s, step 400"
std::string reached_text(const TargetReached& t) {
    return fmt::format("{} at {:.1f} s, step {}", t.target, t.seconds, t.step);
}

}  // namespace

ProgressPrinter::ProgressPrinter(std::FILE* out, const RunSpec& spec, bool draw_bar)
    : out_(out),
      epochs_(spec.epochs),
      optimiser_text_(optimiser_text(spec)),
      targets_(spec.targets),
      draw_bar_(draw_bar) {}

void ProgressPrinter::on_start(const RunInfo& info) {
    std::lock_guard lock(mutex_);
    fmt::print(out_, "{} x {} each ({}), global batch {}, {} per epoch, {} parameters; {}\n",
               plural(info.devices, "device"), plural(info.threads_per_device, "thread"),
               plural(info.cores, "core"), info.global_batch, plural(info.steps_per_epoch, "step"),
               grouped(info.parameters), optimiser_text_);
    std::fflush(out_);
    for (const std::string& warning : info.warnings)
        spdlog::warn("{}", warning);
}

void ProgressPrinter::on_step(const StepMetrics& m) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    for (const DeviceStepTimes& t : m.devices) {
        epoch_times_.data += t.data;
        epoch_times_.forward += t.forward;
        epoch_times_.backward += t.backward;
        epoch_times_.exposed_comm += t.exposed_comm;
        epoch_times_.wait += t.wait;
        epoch_times_.optimizer += t.optimizer;
        epoch_times_.between_processes += t.between_processes;
        if (t.between_processes > 0)
            ++epoch_exchanging_steps_;
    }
    epoch_device_steps_ += std::int64_t(m.devices.size());
    devices_seen_ = std::max(devices_seen_, m.devices.size());
    if (!draw_bar_)
        return;
    if (m.step_in_epoch == 1) {
        epoch_start_ = now;
        smoothed_images_per_s_ = m.images_per_s;
    }
    // Single steps are noisy; an exponential average keeps the figure readable.
    smoothed_images_per_s_ = 0.9 * smoothed_images_per_s_ + 0.1 * m.images_per_s;
    if (now - last_draw_ < redraw_interval && m.step_in_epoch != m.steps_per_epoch)
        return;
    draw_bar(m, now);
}

void ProgressPrinter::draw_bar(const StepMetrics& m, Clock::time_point now) {
    last_draw_ = now;
    const int steps = std::max(1, m.steps_per_epoch);
    const int filled = bar_width * std::clamp(m.step_in_epoch, 0, steps) / steps;
    std::string line =
        fmt::format("epoch {}/{} [{}{}] {}/{}  loss {:.4f}  {:.0f} img/s", m.epoch, epochs_,
                    std::string(filled, '#'), std::string(bar_width - filled, '.'), m.step_in_epoch,
                    steps, m.loss, smoothed_images_per_s_);
    // The first step of an epoch only starts the clock; from the second on, the time per step
    // so far times the steps left in the run (evaluation excluded).
    if (m.step_in_epoch > 1) {
        const double seconds_per_step =
            std::chrono::duration<double>(now - epoch_start_).count() / (m.step_in_epoch - 1);
        const double steps_left =
            double(steps - m.step_in_epoch) + double(epochs_ - m.epoch) * steps;
        line += "  ETA " + clock_text(seconds_per_step * steps_left);
    }
    fmt::print(out_, "\r{}\033[K", line);
    std::fflush(out_);
    bar_shown_ = true;
}

void ProgressPrinter::clear_bar() {
    if (!bar_shown_)
        return;
    std::fputs("\r\033[K", out_);
    bar_shown_ = false;
}

std::string ProgressPrinter::breakdown_text() const {
    if (devices_seen_ < 2 || epoch_device_steps_ == 0)
        return {};
    const double ms = 1000.0 / double(epoch_device_steps_);
    const DeviceStepTimes& t = epoch_times_;
    std::string text = fmt::format(
        "  ms/step per device: forward {:.2f} backward {:.2f} comm {:.2f} wait {:.2f} "
        "data {:.2f} opt {:.2f}",
        t.forward * ms, t.backward * ms, t.exposed_comm * ms, t.wait * ms, t.data * ms,
        t.optimizer * ms);
    // Only the device that exchanges for its process has it: the mean over those.
    if (epoch_exchanging_steps_ > 0)
        text += fmt::format("; all-reduce between processes {:.2f}",
                            t.between_processes * 1000.0 / double(epoch_exchanging_steps_));
    return text;
}

void ProgressPrinter::on_epoch(const EpochMetrics& m) {
    std::lock_guard lock(mutex_);
    clear_bar();
    std::string reached;
    for (const TargetReached& t : m.reached)
        reached += "  reached " + reached_text(t);
    fmt::print(out_,
               "epoch {}/{}  train loss {:.4f} acc {:.4f}  val loss {:.4f} acc {:.4f}  "
               "{:.1f} s  {:.0f} img/s{}{}\n",
               m.epoch, epochs_, m.train_loss, m.train_accuracy, m.val_loss, m.val_accuracy,
               m.epoch_seconds, m.images_per_s, reached, breakdown_text());
    std::fflush(out_);
    epoch_times_ = {};
    epoch_device_steps_ = 0;
    epoch_exchanging_steps_ = 0;
    devices_seen_ = 0;
    other_programs_share_ = m.other_programs_share;
}

void ProgressPrinter::on_end(const RunEnd& end) {
    std::lock_guard lock(mutex_);
    clear_bar();
    std::string reached;
    for (const TargetReached& t : end.targets)
        reached += "; reached " + reached_text(t);
    for (double target : targets_)
        if (std::none_of(end.targets.begin(), end.targets.end(),
                         [target](const TargetReached& t) { return t.target == target; }))
            reached += fmt::format("; {} not reached", target);
    fmt::print(out_, "{} at epoch {}, step {}{}{}{}\n", to_string(end.status), end.epoch, end.step,
               end.message.empty() ? "" : ": ", end.message, reached);
    if (other_programs_share_ >= disturbed_share)  // false for NaN: not measured
        fmt::print(out_,
                   "disturbed: other programs used {:.0f}% of the cores during this run, so its "
                   "images/s may be low\n",
                   other_programs_share_ * 100.0);
    std::fflush(out_);
}

}  // namespace scalelab::cli
