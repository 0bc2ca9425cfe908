#pragma once

#include <QDateTime>
#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "name_table.h"
#include "train/metrics.h"
#include "train/run_spec.h"

namespace scalelab {

// Where a run is in its life. Finished to Failed are how a run ends (RunStatus); Interrupted is a
// run whose process died while it ran (found so in the run store).
enum class RunState {
    Queued,
    Running,
    Finished,
    ReachedTarget,
    Diverged,
    Cancelled,
    Failed,
    Interrupted
};
// Its names in the run store, in exports and in the window.
template <>
struct EnumNames<RunState> {
    static constexpr NameTable<RunState, 8> table{{{{RunState::Queued, "queued"},
                                                    {RunState::Running, "running"},
                                                    {RunState::Finished, "finished"},
                                                    {RunState::ReachedTarget, "reached target"},
                                                    {RunState::Diverged, "diverged"},
                                                    {RunState::Cancelled, "cancelled"},
                                                    {RunState::Failed, "failed"},
                                                    {RunState::Interrupted, "interrupted"}}}};
};
RunState run_state(RunStatus);
bool is_active(RunState);  // queued or running

// The curves kept for every run. Per step: training loss and accuracy (of the batch), learning
// rate, images/s, the gradient noise scale; per epoch: validation loss and accuracy.
enum class Metric {
    TrainLoss,
    TrainAccuracy,
    LearningRate,
    ImagesPerSecond,
    NoiseScale,
    ValLoss,
    ValAccuracy
};
inline constexpr int metric_count = 7;
inline constexpr std::array<Metric, metric_count> all_metrics = {
    Metric::TrainLoss,  Metric::TrainAccuracy, Metric::LearningRate, Metric::ImagesPerSecond,
    Metric::NoiseScale, Metric::ValLoss,       Metric::ValAccuracy};
// The name exports use: "train_loss", "val_accuracy", ...
std::string_view metric_name(Metric);

// One value of a curve with every x it can be drawn against. Per-epoch metrics sit at the
// epoch's last step.
struct MetricPoint {
    std::int64_t step = 0;
    int epoch = 0;
    double samples = 0;  // training images seen by all devices so far
    double seconds = 0;  // training wall time so far (evaluation excluded), as time to target
    double value = 0;
};

// Where one step's time went on every device: the time breakdown view averages these, and the
// Chrome trace export lays them out on a time line.
struct StepTiming {
    std::int64_t step = 0;
    double start = 0;    // training wall time before this step (MetricPoint::seconds' clock)
    double seconds = 0;  // the step's wall time
    std::vector<DeviceStepTimes> devices;  // rank order
};

// A run during which other programs used at least this share of the cores is flagged: the
// scheduler's noise on an idle machine stays well below it.
inline constexpr double disturbed_share = 0.10;

// The steady images/s the engine reported for `epoch`; nothing while the run is within its
// warm-up steps, where EpochMetrics::steady_images_per_s is 0.
std::optional<double> steady_images_per_s(const EpochMetrics& epoch);

// Everything known about one run: its spec, how far it got, and its whole curves (never
// decimated: charts decimate what they draw, exports write everything).
struct RunRecord {
    int id = 0;
    QString name;
    RunSpec spec;
    RunState state = RunState::Queued;
    QString message;  // why it failed or diverged; empty otherwise
    bool started = false;
    RunInfo info;  // valid once started
    QDateTime created;
    QDateTime ended;

    std::array<std::vector<MetricPoint>, metric_count> curves;
    std::vector<EpochMetrics> epochs;
    std::vector<TargetReached> targets;  // every target reached so far
    std::int64_t step = 0;               // the last step reported
    int epoch = 0;
    double train_seconds = 0;  // sum of the step wall times so far
    // Every step's per-device times, for runs trained in this window (the store keeps curves,
    // not timings: a stored run has none).
    std::vector<StepTiming> timings;

    bool visible = true;  // drawn on the charts
    int colour = 0;       // palette index, fixed when the run is created so it never shifts
    QStringList tags;
    // The repeats this run is one of (--repeats N: the same experiment over seeds seed ..
    // seed + N - 1), shared by every member and unique to them; empty when the run stands alone.
    // Members differ in nothing but the seed (run_group.h says which field when they do).
    QString group;

    // A run listed from the run store comes without its curves and epochs (loading them all
    // would take seconds for hundreds of runs): until they are loaded, the summary figures below
    // come from the store's summary instead.
    bool curves_loaded = true;
    std::optional<double> stored_best_val_accuracy;
    std::optional<double> stored_mean_images_per_s;
    std::optional<double> stored_other_programs_share;

    const std::vector<MetricPoint>& curve(Metric metric) const {
        return curves[static_cast<int>(metric)];
    }
    std::vector<MetricPoint>& curve(Metric metric) { return curves[static_cast<int>(metric)]; }

    // Steps the run will take when it trains every epoch; 0 before it starts.
    std::int64_t total_steps() const;
    // Fraction of total_steps() done, in [0, 1].
    double progress() const;
    // Seconds left at the pace so far; nothing before the first step or once ended.
    std::optional<double> eta_seconds() const;
    // The best validation accuracy so far; nothing before the first evaluation.
    std::optional<double> best_val_accuracy() const;
    // Mean images/s leaving out the first steps (the last epoch's steady figure; nothing where
    // the run ended within them); before the first epoch ends, the mean of the steps so far;
    // nothing before the first step.
    std::optional<double> mean_images_per_s() const;
    // The share of the cores other programs used while the run trained (the last epoch's
    // EpochMetrics::other_programs_share); nothing before the first epoch or where unmeasured.
    std::optional<double> other_programs_share() const;
    // Whether other programs took enough of the cores (disturbed_share) that the run's
    // throughput is not the engine's alone.
    bool disturbed() const;
    // When validation accuracy first reached spec.target_accuracy (when set), or else the highest
    // of spec.targets reached so far; nothing when none was.
    std::optional<TargetReached> time_to_target() const;
    // The step at which warm-up ends; nothing when the spec has no warm-up or the run has not
    // started (steps per epoch are known from then).
    std::optional<double> warmup_end_step() const;
};

}  // namespace scalelab
