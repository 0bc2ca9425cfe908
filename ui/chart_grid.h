#pragma once

#include <QTimer>
#include <QWidget>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "chart_surface.h"
#include "curve_decimation.h"
#include "group_curves.h"

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

// The series a group of repeats (RunRecord::group, at least two members shown) draws on a
// chart in place of its members' curves: the mean line (named in the legend) and the
// translucent band of their spread around it.
enum class GroupPart { Mean, Band };

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
// A group of repeats with at least two shown members is drawn as one: the mean of its members'
// curves (group_curve(), each smoothed first where runs are, so that the band is the spread of
// the seeds' trends rather than of every step's noise) with a band of ± 1 standard deviation or
// min to max around it (the Band box; or none), in its first member's colour, named
// "resnet8 batch 256 (5 seeds)" in the legend (group_legend()). The members themselves are
// drawn only on request (the Seeds box), as faint lines in the group's colour; their warm-up
// lines and annotations are drawn in the group's colour either way. A group's curves are kept
// from redraw to redraw until a member gets new points or the x axis, smoothing or band changes.
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
    // The key of one group's series on a chart.
    static QString groupKey(const QString& group, GroupPart part);

    // The charts laid out, in grid order.
    const std::vector<ChartKind>& shownCharts() const { return shown_; }

    XAxis xAxis() const { return x_axis_; }
    double smoothing() const { return smoothing_; }
    GroupBand band() const { return band_; }
    // Whether a group's members are drawn (faintly) behind its mean.
    bool membersShown() const { return members_shown_; }
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
    void setBand(scalelab::GroupBand band);
    void setMembersShown(bool shown);
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
    // How a run's curve is drawn: on its own, faintly behind its group's mean, or not at all
    // (the mean stands for it).
    enum class RunLook { Own, Member, Hidden };
    // What a group's curve on one chart is computed from: equal keys give equal curves. Runs
    // only grow (points are appended), so a member's point count and last value tell its curve
    // apart from any earlier one.
    struct GroupCurveKey {
        struct Member {
            int id = 0;
            std::size_t points = 0;
            std::uint64_t last = 0;  // the bits of the last value (NaN equals itself here)
            bool operator==(const Member&) const = default;
        };
        std::vector<Member> members;
        XAxis axis = XAxis::Step;
        double smoothing = 0.0;  // 0 on the charts that are not smoothed
        GroupBand band = GroupBand::Off;
        bool operator==(const GroupCurveKey&) const = default;
    };
    // A group's curve on one chart as drawn (decimated), and what it was computed from.
    struct GroupChartCurve {
        GroupCurveKey key;
        QList<QPointF> mean;  // empty where the members' curves do not overlap
        BandEdges band;       // empty with GroupBand::Off
    };
    // A group as drawn: its shown members, what the legend lists for it, and its curves.
    struct DrawnGroup {
        std::vector<int> members;
        QString legend;
        int colour = 0;  // palette index: its first member's
        std::array<GroupChartCurve, chart_kind_count> curves;
    };
    using ShownGroups = std::map<QString, std::vector<const RunRecord*>>;

    QWidget* createControls();
    void markDirty(int id);
    void markAllDirty();
    // The groups with at least two shown members, each with those in RunCollection order.
    ShownGroups shownGroups() const;
    // The groups the dirty runs are or were drawn in; their members all become dirty.
    std::set<QString> dirtyGroups(const ShownGroups& shown);
    void drawRun(const RunRecord& record, const ShownGroups& shown);
    // `references`: whether the run's own warm-up and global-batch lines are drawn.
    void drawChart(ChartKind kind, const RunRecord& record, RunLook look, const QColor& colour,
                   bool references);
    void drawGroup(const QString& group, const std::vector<const RunRecord*>& members);
    void drawGroupChart(ChartKind kind, const QString& group,
                        const std::vector<const RunRecord*>& members, DrawnGroup& drawn);
    // The group's curve on chart `kind`: `cached` when its key still holds, else computed anew
    // into it.
    const GroupChartCurve& groupChartCurve(ChartKind kind,
                                           const std::vector<const RunRecord*>& members,
                                           GroupChartCurve& cached) const;
    void eraseGroup(const QString& group);
    void drawGlobalBatch(const RunRecord& record, const QColor& colour, bool references);
    void drawAnnotations(const RunRecord& record, const QColor& colour, bool grouped);
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
    QComboBox* band_box_ = nullptr;
    QCheckBox* members_box_ = nullptr;
    ChartLegend* shared_legend_ = nullptr;

    XAxis x_axis_ = XAxis::Step;
    double smoothing_ = default_smoothing;
    bool legend_shown_ = true;
    GroupBand band_ = GroupBand::StdDev;
    bool members_shown_ = false;
    QTimer redraw_timer_;
    std::set<int> dirty_;              // runs to redraw (or erase, once hidden or removed)
    std::set<int> drawn_;              // runs with series on the charts
    std::map<int, int> labels_drawn_;  // run id -> annotation labels it has on the charts
    std::map<QString, DrawnGroup> groups_drawn_;  // groups with series on the charts
    int redraw_count_ = 0;
};

}  // namespace scalelab
