#pragma once

#include <QTimer>
#include <QWidget>

#include <array>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "chart_surface.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QSlider;

namespace scalelab {

class ChartLegend;
class RunCollection;
struct RunRecord;

// The charts of the main window. The gradient noise scale (B_simple, the batch size beyond which
// a larger batch mostly wastes compute) is shown on demand: it is only measured with more than
// one device or with gradient accumulation.
enum class ChartKind { TrainLoss, ValAccuracy, ImagesPerSecond, LearningRate, NoiseScale };
inline constexpr int chart_kind_count = 5;
inline constexpr std::array<ChartKind, chart_kind_count> all_chart_kinds = {
    ChartKind::TrainLoss, ChartKind::ValAccuracy, ChartKind::ImagesPerSecond,
    ChartKind::LearningRate, ChartKind::NoiseScale};
// The charts a grid shows until told otherwise, in grid order.
inline constexpr std::array<ChartKind, 4> default_shown_charts = {
    ChartKind::TrainLoss, ChartKind::ValAccuracy, ChartKind::ImagesPerSecond,
    ChartKind::LearningRate};

// How many of `count` charts go in each row of the grid, top to bottom: one fills the grid, two
// sit side by side, three and four make two rows of two (the third alone and full width), five
// a row of three over a row of two. Charts share their row's width equally.
std::vector<int> chart_grid_rows(int count);

// What the x axis of every chart counts. Epoch is fractional for per-step curves (step / steps
// per epoch); per-epoch values sit at whole epochs. Wall time is training time (MetricPoint::
// seconds).
enum class XAxis { Step, Epoch, Samples, WallTime };

// The series one run draws on a chart: its curve (smoothed where smoothing applies; the one
// named in the legend), the raw points drawn faintly behind a smoothed curve, the dashed
// vertical line where its warm-up ends, and on the noise-scale chart the dashed horizontal line
// at its global batch.
enum class SeriesPart { Curve, Raw, WarmupEnd, GlobalBatch };

// Training loss, validation accuracy, images/s, learning rate and gradient noise scale of the
// visible runs of a RunCollection, side by side in a grid, with the controls they share above
// them: the x axis, the smoothing weight (TensorBoard's debiased EMA), a log scale for the loss,
// whether the noise-scale chart is shown and whether legends are. Which charts the grid shows is
// settable (a lesson shows only those it is about); hidden charts are still drawn, so chart(kind)
// always works.
//
// Every chart shows the same runs in the same colours. Each chart draws its own legend where
// every shown chart's fits it in one row (ChartSurface::legendFits()); else one legend under the
// grid lists the runs, and the charts draw none.
//
// Each visible run's annotations (run_annotations()) that have a point are written beside it on
// the chart of their metric, in the run's colour.
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
    // No chart is drawn shorter, whatever the window's size: below it the axes' labels crowd
    // out the plot.
    static constexpr int min_chart_height = 200;

    explicit ChartGrid(RunCollection& runs, QWidget* parent = nullptr);
    ~ChartGrid() override;

    ChartSurface& chart(ChartKind kind);
    static QString title(ChartKind kind);
    // The key of one run's series on a chart (the objectName of the QLineSeries behind it).
    static QString seriesKey(int runId, SeriesPart part);
    // The key of the run's label `index`: its annotations that have a point, in
    // run_annotations() order, counted from 0.
    static QString annotationKey(int runId, int index);

    // The charts laid out, in grid order.
    const std::vector<ChartKind>& shownCharts() const { return shown_; }

    XAxis xAxis() const { return x_axis_; }
    double smoothing() const { return smoothing_; }
    bool logLoss() const;
    // Whether legends are shown (the charts' own, or the one under the grid); exports always
    // have theirs.
    bool legendShown() const { return legend_shown_; }
    // The legend under the grid, shown where the charts' own would not fit.
    const ChartLegend& sharedLegend() const { return *shared_legend_; }
    // Redraws done so far (each redraws every run that was dirty).
    int redrawCount() const { return redraw_count_; }

  public slots:
    // Lays out `charts` (see chart_grid_rows()) and hides the others. False, changing nothing,
    // when the list is empty or names a chart twice.
    bool setShownCharts(const std::vector<scalelab::ChartKind>& charts);
    void setXAxis(scalelab::XAxis axis);
    // False, changing nothing, when `weight` is outside [0, max_smoothing].
    bool setSmoothing(double weight);
    void setLogLoss(bool log);
    void setDarkTheme(bool dark);
    // Multiplies every chart font (presenter mode); false, changing nothing, unless scale > 0.
    bool setFontScale(double scale);
    // Shows or hides the legends, as the Legend box above the charts does (it follows).
    void setLegendShown(bool shown);
    // Redraws the dirty runs now instead of at the next timer tick.
    void redrawNow();

  signals:
    void redrawn();
    // The legends were shown or hidden (from the box or setLegendShown()).
    void legendShownChanged(bool shown);

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    QWidget* createControls();
    void markDirty(int id);
    void markAllDirty();
    void drawRun(const RunRecord& record);
    void drawChart(ChartKind kind, const RunRecord& record);
    void drawGlobalBatch(const RunRecord& record);
    void drawAnnotations(const RunRecord& record);
    void eraseAnnotations(int id, int from);
    void eraseRun(int id);
    void updateAxisTitles();
    void layOutCharts();
    // Lists the drawn runs in the shared legend, and shows it or the charts' own (or neither).
    void updateLegends();

    RunCollection& runs_;
    std::array<std::unique_ptr<ChartSurface>, chart_kind_count> charts_;
    std::vector<ChartKind> shown_;
    QGridLayout* chart_layout_ = nullptr;
    QComboBox* x_axis_box_ = nullptr;
    QSlider* smoothing_slider_ = nullptr;
    QLabel* smoothing_value_ = nullptr;
    QCheckBox* log_loss_box_ = nullptr;
    QCheckBox* noise_scale_box_ = nullptr;
    QCheckBox* legend_box_ = nullptr;
    ChartLegend* shared_legend_ = nullptr;

    XAxis x_axis_ = XAxis::Step;
    double smoothing_ = default_smoothing;
    bool legend_shown_ = true;
    QTimer redraw_timer_;
    std::set<int> dirty_;              // runs to redraw (or erase, once hidden or removed)
    std::set<int> drawn_;              // runs with series on the charts
    std::map<int, int> labels_drawn_;  // run id -> annotation labels it has on the charts
    int redraw_count_ = 0;
};

}  // namespace scalelab
