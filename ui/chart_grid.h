#pragma once

#include <QTimer>
#include <QWidget>

#include <array>
#include <memory>
#include <set>

#include "chart_surface.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace scalelab {

class RunCollection;
struct RunRecord;

// The four charts of the main window, in grid order.
enum class ChartKind { TrainLoss, ValAccuracy, ImagesPerSecond, LearningRate };
inline constexpr int chart_kind_count = 4;
inline constexpr std::array<ChartKind, chart_kind_count> all_chart_kinds = {
    ChartKind::TrainLoss, ChartKind::ValAccuracy, ChartKind::ImagesPerSecond,
    ChartKind::LearningRate};

// What the x axis of every chart counts. Epoch is fractional for per-step curves (step / steps
// per epoch); per-epoch values sit at whole epochs. Wall time is training time (MetricPoint::
// seconds).
enum class XAxis { Step, Epoch, Samples, WallTime };

// The series one run draws on a chart: its curve (smoothed where smoothing applies; the one
// named in the legend), the raw points drawn faintly behind a smoothed curve, and the dashed
// vertical line where its warm-up ends.
enum class SeriesPart { Curve, Raw, WarmupEnd };

// Training loss, validation accuracy, images/s and learning rate of the visible runs of a
// RunCollection, side by side in a 2x2 grid, with the controls they share above them: the x
// axis, the smoothing weight (TensorBoard's debiased EMA) and a log scale for the loss.
//
// Live updates: the collection's signals only mark runs dirty; a 50 ms single-shot timer then
// redraws the dirty runs (at most 20 redraws a second however fast steps arrive), each series
// with one setSeries of at most default_max_drawn_points points (min/max decimation), then fits
// the axes. The curves themselves stay in the collection.
class ChartGrid : public QWidget {
    Q_OBJECT

  public:
    static constexpr double default_smoothing = 0.6;
    static constexpr double max_smoothing = 0.99;
    static constexpr int redraw_interval_ms = 50;

    explicit ChartGrid(RunCollection& runs, QWidget* parent = nullptr);
    ~ChartGrid() override;

    ChartSurface& chart(ChartKind kind);
    static QString title(ChartKind kind);
    // The key of one run's series on a chart (the objectName of the QLineSeries behind it).
    static QString seriesKey(int runId, SeriesPart part);

    XAxis xAxis() const { return x_axis_; }
    double smoothing() const { return smoothing_; }
    bool logLoss() const;
    // Redraws done so far (each redraws every run that was dirty).
    int redrawCount() const { return redraw_count_; }

  public slots:
    void setXAxis(scalelab::XAxis axis);
    // False, changing nothing, when `weight` is outside [0, max_smoothing].
    bool setSmoothing(double weight);
    void setLogLoss(bool log);
    void setDarkTheme(bool dark);
    // Multiplies every chart font (presenter mode); false, changing nothing, unless scale > 0.
    bool setFontScale(double scale);
    // Redraws the dirty runs now instead of at the next timer tick.
    void redrawNow();

  signals:
    void redrawn();

  private:
    QWidget* createControls();
    void markDirty(int id);
    void markAllDirty();
    void drawRun(const RunRecord& record);
    void drawChart(ChartKind kind, const RunRecord& record);
    void eraseRun(int id);
    void updateAxisTitles();

    RunCollection& runs_;
    std::array<std::unique_ptr<ChartSurface>, chart_kind_count> charts_;
    QComboBox* x_axis_box_ = nullptr;
    QSlider* smoothing_slider_ = nullptr;
    QLabel* smoothing_value_ = nullptr;
    QCheckBox* log_loss_box_ = nullptr;

    XAxis x_axis_ = XAxis::Step;
    double smoothing_ = default_smoothing;
    QTimer redraw_timer_;
    std::set<int> dirty_;  // runs to redraw (or erase, once hidden or removed)
    std::set<int> drawn_;  // runs with series on the charts
    int redraw_count_ = 0;
};

}  // namespace scalelab
