#include "chart_grid.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "chart_legend.h"
#include "curve_decimation.h"
#include "curve_smoothing.h"
#include "group_curves.h"
#include "run_annotations.h"
#include "run_collection.h"
#include "run_palette.h"

namespace scalelab {

namespace {

constexpr int slider_steps = 100;  // the smoothing slider moves in steps of 0.01
// The grid layout's columns: a multiple of every row's chart count, so that each chart of a row
// spans an equal share of them.
constexpr int layout_columns = 6;
// A chart keeps its own legend while the legend fits one row under it (or a column beside it):
// where each chart would need more rows, one shared legend under the grid takes less room than
// the charts' copies of it, and leaves the plots taller.
constexpr int legend_rows_on_a_chart = 1;

Metric metric_of(ChartKind kind) {
    switch (kind) {
        case ChartKind::TrainLoss:
            return Metric::TrainLoss;
        case ChartKind::ValAccuracy:
            return Metric::ValAccuracy;
        case ChartKind::ImagesPerSecond:
            return Metric::ImagesPerSecond;
        case ChartKind::LearningRate:
            return Metric::LearningRate;
        case ChartKind::NoiseScale:
            return Metric::NoiseScale;
    }
    return Metric::TrainLoss;
}

// The chart that draws `metric`; nothing for the curves no chart shows.
std::optional<ChartKind> chart_of(Metric metric) {
    for (const ChartKind kind : all_chart_kinds)
        if (metric_of(kind) == metric)
            return kind;
    return std::nullopt;
}

// Per-epoch curves have a value at whole epochs only.
bool per_epoch(Metric metric) {
    return metric == Metric::ValAccuracy || metric == Metric::ValLoss;
}

QString y_title(ChartKind kind) {
    switch (kind) {
        case ChartKind::TrainLoss:
            return ChartGrid::tr("Loss");
        case ChartKind::ValAccuracy:
            return ChartGrid::tr("Accuracy");
        case ChartKind::ImagesPerSecond:
            return ChartGrid::tr("Images/s");
        case ChartKind::LearningRate:
            return ChartGrid::tr("Learning rate");
        case ChartKind::NoiseScale:
            return ChartGrid::tr("Batch size (B_simple)");
    }
    return {};
}

QString x_title(XAxis axis) {
    switch (axis) {
        case XAxis::Step:
            return ChartGrid::tr("Step");
        case XAxis::Epoch:
            return ChartGrid::tr("Epoch");
        case XAxis::Samples:
            return ChartGrid::tr("Samples seen");
        case XAxis::WallTime:
            return ChartGrid::tr("Training time (s)");
    }
    return {};
}

// Noisy per-step curves are smoothed. Validation accuracy has one exact value per epoch, and
// the learning rate is an exact schedule: smoothing either would only shift it.
bool smoothed(ChartKind kind) {
    return kind == ChartKind::TrainLoss || kind == ChartKind::ImagesPerSecond;
}

double x_of(const MetricPoint& point, const RunRecord& record, XAxis axis, bool whole_epoch) {
    switch (axis) {
        case XAxis::Step:
            return double(point.step);
        case XAxis::Epoch:
            if (whole_epoch || record.info.steps_per_epoch <= 0)
                return point.epoch;
            return double(point.step) / record.info.steps_per_epoch;
        case XAxis::Samples:
            return point.samples;
        case XAxis::WallTime:
            return point.seconds;
    }
    return double(point.step);
}

// Where warm-up ends in the unit of the x axis; nothing without warm-up, and in wall time
// nothing until the run has got there.
std::optional<double> warmup_end_x(const RunRecord& record, XAxis axis) {
    const std::optional<double> step = record.warmup_end_step();
    if (!step)
        return std::nullopt;
    switch (axis) {
        case XAxis::Step:
            return *step;
        case XAxis::Epoch:
            if (record.info.steps_per_epoch <= 0)
                return std::nullopt;
            return *step / record.info.steps_per_epoch;
        case XAxis::Samples:
            return *step * record.info.global_batch;
        case XAxis::WallTime:
            for (const MetricPoint& point : record.curve(Metric::TrainLoss))
                if (double(point.step) >= *step)
                    return point.seconds;
            return std::nullopt;
    }
    return std::nullopt;
}

// Reference lines: the end of warm-up, the global batch.
SeriesStyle reference_style(const QColor& colour) {
    return {.colour = colour, .width = 1.5, .faint = false, .dashed = true, .markers = false};
}

// A run's curve for `kind` against the x axis.
// Every point's x (by `x_of`) and value, in one pass without a branch per point: redraws that
// recompute every curve read 100 runs x 3 curves x 10,000 points this way (docs/repeats.md).
template <typename XOf>
void fill_xy(const std::vector<MetricPoint>& curve, XOf x_of_point, std::vector<double>& xs,
             std::vector<double>& ys) {
    xs.resize(curve.size());
    ys.resize(curve.size());
    for (std::size_t i = 0; i < curve.size(); ++i) {
        xs[i] = x_of_point(curve[i]);
        ys[i] = curve[i].value;
    }
}

void curve_xy(const RunRecord& record, ChartKind kind, XAxis axis, std::vector<double>& xs,
              std::vector<double>& ys) {
    const std::vector<MetricPoint>& curve = record.curve(metric_of(kind));
    const bool whole_epochs = per_epoch(metric_of(kind));
    switch (axis) {
        case XAxis::Step:
            return fill_xy(
                curve, [](const MetricPoint& p) { return double(p.step); }, xs, ys);
        case XAxis::Samples:
            return fill_xy(
                curve, [](const MetricPoint& p) { return p.samples; }, xs, ys);
        case XAxis::WallTime:
            return fill_xy(
                curve, [](const MetricPoint& p) { return p.seconds; }, xs, ys);
        case XAxis::Epoch:
            break;
    }
    fill_xy(
        curve, [&](const MetricPoint& p) { return x_of(p, record, axis, whole_epochs); }, xs, ys);
}

QString band_title(GroupBand band) {
    switch (band) {
        case GroupBand::StdDev:
            return ChartGrid::tr("± 1 std");
        case GroupBand::MinMax:
            return ChartGrid::tr("min–max");
        case GroupBand::Off:
            return ChartGrid::tr("off");
    }
    return {};
}

}  // namespace

ChartGrid::ChartGrid(RunCollection& runs, QWidget* parent) : QWidget(parent), runs_(runs) {
    chart_layout_ = new QGridLayout;
    chart_layout_->setSpacing(6);
    for (int column = 0; column < layout_columns; ++column)
        chart_layout_->setColumnStretch(column, 1);
    for (const ChartKind kind : all_chart_kinds) {
        charts_[int(kind)] = make_chart_surface(this);
        charts_[int(kind)]->setTitle(title(kind));
        charts_[int(kind)]->widget()->setMinimumHeight(min_chart_height);
    }
    // B_simple spans orders of magnitude as training goes on.
    chart(ChartKind::NoiseScale).setLogY(true);
    updateAxisTitles();

    shared_legend_ = new ChartLegend;
    shared_legend_->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(createControls());
    layout->addLayout(chart_layout_, 1);
    layout->addWidget(shared_legend_);
    setShownCharts({default_shown_charts.begin(), default_shown_charts.end()});

    redraw_timer_.setSingleShot(true);
    redraw_timer_.setInterval(redraw_interval_ms);
    connect(&redraw_timer_, &QTimer::timeout, this, &ChartGrid::redrawNow);

    connect(&runs_, &RunCollection::runAdded, this, &ChartGrid::markDirty);
    connect(&runs_, &RunCollection::runChanged, this, &ChartGrid::markDirty);
    connect(&runs_, &RunCollection::curvesChanged, this, &ChartGrid::markDirty);
    connect(&runs_, &RunCollection::runRemoved, this, &ChartGrid::markDirty);
    markAllDirty();
}

ChartGrid::~ChartGrid() = default;

QWidget* ChartGrid::createControls() {
    auto* controls = new QToolBar;
    controls->setObjectName(QStringLiteral("chartControls"));

    x_axis_box_ = new QComboBox;
    for (const XAxis axis : {XAxis::Step, XAxis::Epoch, XAxis::Samples, XAxis::WallTime})
        x_axis_box_->addItem(x_title(axis), int(axis));
    connect(x_axis_box_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setXAxis(XAxis(x_axis_box_->itemData(index).toInt())); });
    auto* x_label = new QLabel(tr("&X axis:"));
    x_label->setBuddy(x_axis_box_);

    smoothing_slider_ = new QSlider(Qt::Horizontal);
    smoothing_slider_->setRange(0, int(std::lround(max_smoothing * slider_steps)));
    smoothing_slider_->setValue(int(std::lround(smoothing_ * slider_steps)));
    smoothing_slider_->setMinimumWidth(120);
    smoothing_slider_->setToolTip(
        tr("Weight of TensorBoard's debiased exponential moving average (0: raw values)"));
    connect(smoothing_slider_, &QSlider::valueChanged, this,
            [this](int value) { setSmoothing(double(value) / slider_steps); });
    auto* smoothing_label = new QLabel(tr("&Smoothing:"));
    smoothing_label->setBuddy(smoothing_slider_);
    smoothing_value_ = new QLabel(QString::number(smoothing_, 'f', 2));
    smoothing_value_->setMinimumWidth(smoothing_value_->fontMetrics().horizontalAdvance("0.00 "));

    log_loss_box_ = new QCheckBox(tr("&Log scale (loss)"));
    connect(log_loss_box_, &QCheckBox::toggled, this, &ChartGrid::setLogLoss);

    noise_scale_box_ = new QCheckBox(tr("&Noise scale"));
    noise_scale_box_->setToolTip(
        tr("Show the gradient noise scale B_simple: the batch size beyond which a larger batch "
           "mostly wastes compute (measured with more than one device or with accumulation)"));
    connect(noise_scale_box_, &QCheckBox::toggled, this, [this](bool shown) {
        std::vector<ChartKind> charts = shown_;
        std::erase(charts, ChartKind::NoiseScale);
        if (shown)
            charts.push_back(ChartKind::NoiseScale);
        // Refused when it would leave no chart: the box stays as it was.
        if (!setShownCharts(charts)) {
            const QSignalBlocker blocker(noise_scale_box_);
            noise_scale_box_->setChecked(!shown);
        }
    });

    legend_box_ = new QCheckBox(tr("Le&gend"));
    legend_box_->setObjectName(QStringLiteral("legendToggle"));
    legend_box_->setChecked(legend_shown_);
    legend_box_->setToolTip(
        tr("Show the runs' names and colours on the charts (exports always have them)"));
    connect(legend_box_, &QCheckBox::toggled, this, &ChartGrid::setLegendShown);

    band_box_ = new QComboBox;
    band_box_->setObjectName(QStringLiteral("bandChoice"));
    for (const GroupBand band : {GroupBand::StdDev, GroupBand::MinMax, GroupBand::Off})
        band_box_->addItem(band_title(band), int(band));
    band_box_->setToolTip(
        tr("What the band around a group's mean spans: one standard deviation "
           "of its runs either side, or their lowest to highest"));
    connect(band_box_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setBand(GroupBand(band_box_->itemData(index).toInt())); });
    auto* band_label = new QLabel(tr("&Band:"));
    band_label->setBuddy(band_box_);

    members_box_ = new QCheckBox(tr("S&eeds"));
    members_box_->setObjectName(QStringLiteral("membersToggle"));
    members_box_->setToolTip(tr("Draw each run of a group faintly behind the group's mean"));
    connect(members_box_, &QCheckBox::toggled, this, &ChartGrid::setMembersShown);

    // A tool bar rather than a row: on a narrow window the controls that do not fit move into
    // its extension menu (») instead of widening the window.
    controls->setIconSize(QSize(16, 16));
    for (QWidget* control : std::initializer_list<QWidget*>{
             x_label, x_axis_box_, nullptr, smoothing_label, smoothing_slider_, smoothing_value_,
             nullptr, log_loss_box_, nullptr, noise_scale_box_, nullptr, legend_box_, nullptr,
             band_label, band_box_, members_box_}) {
        if (control == nullptr)
            controls->addSeparator();
        else
            controls->addWidget(control);
    }
    return controls;
}

ChartSurface& ChartGrid::chart(ChartKind kind) {
    return *charts_[int(kind)];
}

QString ChartGrid::title(ChartKind kind) {
    switch (kind) {
        case ChartKind::TrainLoss:
            return tr("Training loss");
        case ChartKind::ValAccuracy:
            return tr("Validation accuracy");
        case ChartKind::ImagesPerSecond:
            return tr("Throughput");
        case ChartKind::LearningRate:
            return tr("Learning rate");
        case ChartKind::NoiseScale:
            return tr("Gradient noise scale");
    }
    return {};
}

QString ChartGrid::seriesKey(int runId, SeriesPart part) {
    static constexpr std::array<const char*, 4> part_names = {"curve", "raw", "warmup-end",
                                                              "global-batch"};
    return QStringLiteral("run-%1-%2").arg(runId).arg(QLatin1String(part_names[int(part)]));
}

QString ChartGrid::annotationKey(int runId, int index) {
    return QStringLiteral("run-%1-note-%2").arg(runId).arg(index);
}

QString ChartGrid::groupKey(const QString& group, GroupPart part) {
    return QStringLiteral("group-%1-%2").arg(group, part == GroupPart::Mean ? "mean" : "band");
}

std::vector<int> chart_grid_rows(int count) {
    const int per_row = count <= 2 ? count : count <= 4 ? 2 : 3;
    std::vector<int> rows;
    for (int left = count; left > 0; left -= per_row)
        rows.push_back(std::min(left, per_row));
    return rows;
}

bool ChartGrid::setShownCharts(const std::vector<ChartKind>& charts) {
    const std::set<ChartKind> distinct(charts.begin(), charts.end());
    if (charts.empty() || distinct.size() != charts.size())
        return false;
    shown_ = charts;
    const QSignalBlocker blocker(noise_scale_box_);
    noise_scale_box_->setChecked(distinct.contains(ChartKind::NoiseScale));
    layOutCharts();
    updateLegends();
    return true;
}

void ChartGrid::layOutCharts() {
    for (const ChartKind kind : all_chart_kinds) {
        QWidget* widget = chart(kind).widget();
        chart_layout_->removeWidget(widget);
        widget->setVisible(std::find(shown_.begin(), shown_.end(), kind) != shown_.end());
    }
    const std::vector<int> rows = chart_grid_rows(int(shown_.size()));
    auto next = shown_.begin();
    for (int row = 0; row < chart_layout_->rowCount() || row < int(rows.size()); ++row) {
        // Rows left over from a longer layout take no space.
        chart_layout_->setRowStretch(row, row < int(rows.size()) ? 1 : 0);
        if (row >= int(rows.size()))
            continue;
        const int in_row = rows[std::size_t(row)];
        const int span = layout_columns / in_row;
        for (int column = 0; column < in_row; ++column)
            chart_layout_->addWidget(chart(*next++).widget(), row, column * span, 1, span);
    }
}

bool ChartGrid::logLoss() const {
    return charts_[int(ChartKind::TrainLoss)]->logY();
}

void ChartGrid::setXAxis(XAxis axis) {
    if (axis == x_axis_)
        return;
    x_axis_ = axis;
    const QSignalBlocker blocker(x_axis_box_);
    x_axis_box_->setCurrentIndex(x_axis_box_->findData(int(axis)));
    updateAxisTitles();
    markAllDirty();
}

bool ChartGrid::setSmoothing(double weight) {
    if (!(weight >= 0.0 && weight <= max_smoothing))
        return false;
    if (weight == smoothing_)
        return true;
    smoothing_ = weight;
    const QSignalBlocker blocker(smoothing_slider_);
    smoothing_slider_->setValue(int(std::lround(weight * slider_steps)));
    smoothing_value_->setText(QString::number(weight, 'f', 2));
    markAllDirty();
    return true;
}

void ChartGrid::setLogLoss(bool log) {
    const QSignalBlocker blocker(log_loss_box_);
    log_loss_box_->setChecked(log);
    // The surface keeps every point it was given and refits: no redraw of the runs needed.
    chart(ChartKind::TrainLoss).setLogY(log);
}

void ChartGrid::setBand(GroupBand band) {
    if (band == band_)
        return;
    band_ = band;
    const QSignalBlocker blocker(band_box_);
    band_box_->setCurrentIndex(band_box_->findData(int(band)));
    markAllDirty();
}

void ChartGrid::setMembersShown(bool shown) {
    if (shown == members_shown_)
        return;
    members_shown_ = shown;
    const QSignalBlocker blocker(members_box_);
    members_box_->setChecked(shown);
    markAllDirty();
}

void ChartGrid::setDarkTheme(bool dark) {
    for (auto& surface : charts_)
        surface->setDarkTheme(dark);
    markAllDirty();  // run colours are the theme's
}

bool ChartGrid::setFontScale(double scale) {
    if (!(scale > 0.0) || !std::isfinite(scale))
        return false;
    for (auto& surface : charts_)
        surface->setFontScale(scale);
    shared_legend_->setFontScale(scale);
    updateLegends();
    return true;
}

void ChartGrid::setLegendShown(bool shown) {
    if (shown == legend_shown_)
        return;
    legend_shown_ = shown;
    const QSignalBlocker blocker(legend_box_);
    legend_box_->setChecked(shown);
    updateLegends();
    emit legendShownChanged(shown);
}

void ChartGrid::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    updateLegends();
}

// Whether the charts' legends fit is judged at the charts' sizes as laid out now. Showing the
// shared legend makes the charts shorter, so their legends fit no better; hiding it makes them
// taller, so they fit still: the choice holds once the layout follows it.
void ChartGrid::updateLegends() {
    const auto drawn = [this](const QString& key) {
        return std::any_of(charts_.begin(), charts_.end(),
                           [&key](const auto& surface) { return surface->hasSeries(key); });
    };
    // A group is listed where its first member would be, once.
    std::vector<ChartLegend::Entry> entries;
    std::set<QString> listed_groups;
    for (const int id : runs_.ids()) {
        const RunRecord* record = runs_.find(id);
        if (record == nullptr)
            continue;
        const auto group = groups_drawn_.find(record->group);
        if (group == groups_drawn_.end()) {
            if (drawn(seriesKey(id, SeriesPart::Curve)))
                entries.push_back({.name = record->name, .colour = run_colour(record->colour)});
        } else if (listed_groups.insert(group->first).second &&
                   drawn(groupKey(group->first, GroupPart::Mean))) {
            entries.push_back(
                {.name = group->second.legend, .colour = run_colour(group->second.colour)});
        }
    }
    shared_legend_->setEntries(std::move(entries));

    layout()->activate();
    const bool each_fits = std::all_of(shown_.begin(), shown_.end(), [this](ChartKind kind) {
        return chart(kind).legendFits(legend_rows_on_a_chart);
    });
    for (auto& surface : charts_)
        surface->setLegendShown(legend_shown_ && each_fits);
    shared_legend_->setVisible(legend_shown_ && !each_fits);
}

void ChartGrid::updateAxisTitles() {
    for (const ChartKind kind : all_chart_kinds)
        chart(kind).setAxisTitles(x_title(x_axis_), y_title(kind));
}

void ChartGrid::markDirty(int id) {
    dirty_.insert(id);
    if (!redraw_timer_.isActive())
        redraw_timer_.start();
}

void ChartGrid::markAllDirty() {
    dirty_.insert(drawn_.begin(), drawn_.end());
    dirty_.insert(runs_.ids().begin(), runs_.ids().end());
    if (!dirty_.empty() && !redraw_timer_.isActive())
        redraw_timer_.start();
}

void ChartGrid::redrawNow() {
    redraw_timer_.stop();
    if (dirty_.empty())
        return;
    const ShownGroups shown = shownGroups();
    const std::set<QString> groups = dirtyGroups(shown);
    for (const int id : std::exchange(dirty_, {})) {
        const RunRecord* record = runs_.find(id);
        if (record != nullptr && record->visible)
            drawRun(*record, shown);
        else
            eraseRun(id);
    }
    for (const QString& group : groups) {
        const auto found = shown.find(group);
        if (found != shown.end())
            drawGroup(group, found->second);
        else
            eraseGroup(group);
    }
    for (auto& surface : charts_)
        surface->fitAxes();
    updateLegends();
    ++redraw_count_;
    emit redrawn();
}

ChartGrid::ShownGroups ChartGrid::shownGroups() const {
    ShownGroups groups;
    for (const int id : runs_.ids()) {
        const RunRecord* record = runs_.find(id);
        if (record != nullptr && record->visible && !record->group.isEmpty())
            groups[record->group].push_back(record);
    }
    std::erase_if(groups, [](const auto& group) { return group.second.size() < 2; });
    return groups;
}

// A run that joins or leaves its group's drawing (shown, hidden, added, removed) changes how
// the group and each of its other members are drawn.
std::set<QString> ChartGrid::dirtyGroups(const ShownGroups& shown) {
    std::set<QString> groups;
    for (const int id : dirty_) {
        const RunRecord* record = runs_.find(id);
        if (record != nullptr && !record->group.isEmpty())
            groups.insert(record->group);
        for (const auto& [group, drawn] : groups_drawn_)
            if (std::find(drawn.members.begin(), drawn.members.end(), id) != drawn.members.end())
                groups.insert(group);
    }
    for (const QString& group : groups) {
        if (const auto found = shown.find(group); found != shown.end())
            for (const RunRecord* member : found->second)
                dirty_.insert(member->id);
        if (const auto drawn = groups_drawn_.find(group); drawn != groups_drawn_.end())
            dirty_.insert(drawn->second.members.begin(), drawn->second.members.end());
    }
    return groups;
}

void ChartGrid::drawRun(const RunRecord& record, const ShownGroups& shown) {
    const auto group = shown.find(record.group);
    const bool grouped = !record.group.isEmpty() && group != shown.end();
    const RunLook look = !grouped         ? RunLook::Own
                         : members_shown_ ? RunLook::Member
                                          : RunLook::Hidden;
    // A member's reference lines and notes take its group's colour: they read as the group's.
    // Its first member's reference lines stand for every member's (the same spec): N dashed lines
    // on top of each other would cost N times the drawing.
    const QColor colour = run_colour(grouped ? group->second.front()->colour : record.colour);
    const bool references = !grouped || group->second.front() == &record;
    for (const ChartKind kind : all_chart_kinds)
        drawChart(kind, record, look, colour, references);
    drawGlobalBatch(record, colour, references);
    drawAnnotations(record, colour, grouped);
    drawn_.insert(record.id);
}

void ChartGrid::drawChart(ChartKind kind, const RunRecord& record, RunLook look,
                          const QColor& colour, bool references) {
    ChartSurface& surface = chart(kind);
    const QString curve_key = seriesKey(record.id, SeriesPart::Curve);
    const QString raw_key = seriesKey(record.id, SeriesPart::Raw);
    const QString warmup_key = seriesKey(record.id, SeriesPart::WarmupEnd);
    if (record.curve(metric_of(kind)).empty()) {
        for (const QString& key : {curve_key, raw_key, warmup_key})
            surface.removeSeries(key);
        return;
    }
    const std::optional<double> warmup_x = warmup_end_x(record, x_axis_);
    if (warmup_x && references)
        surface.setVerticalLine(warmup_key, *warmup_x, reference_style(colour));
    else
        surface.removeSeries(warmup_key);
    if (look == RunLook::Hidden) {
        surface.removeSeries(curve_key);
        surface.removeSeries(raw_key);
        return;
    }

    std::vector<double> xs;
    std::vector<double> ys;
    curve_xy(record, kind, x_axis_, xs, ys);
    const bool smooth = smoothed(kind) && smoothing_ > 0.0;
    if (look == RunLook::Member) {
        // One faint line, out of the legend: the group's mean is what is read.
        const SeriesStyle faint{
            .colour = colour, .width = 1.0, .faint = true, .dashed = false, .markers = false};
        surface.removeSeries(raw_key);
        if (smooth)
            smooth_ema_in_place(ys, smoothing_);
        surface.setSeries(curve_key, {}, decimate_min_max(xs, ys), faint);
        return;
    }
    const SeriesStyle line{.colour = colour,
                           .width = 2.0,
                           .faint = false,
                           .dashed = false,
                           .markers = per_epoch(metric_of(kind))};
    if (smooth) {
        const SeriesStyle faint{
            .colour = colour, .width = 1.0, .faint = true, .dashed = false, .markers = false};
        surface.setSeries(raw_key, {}, decimate_min_max(xs, ys), faint);
        surface.setSeries(curve_key, record.name, decimate_min_max(xs, smooth_ema(ys, smoothing_)),
                          line);
    } else {
        surface.removeSeries(raw_key);
        surface.setSeries(curve_key, record.name, decimate_min_max(xs, ys), line);
    }
}

void ChartGrid::drawGroup(const QString& group, const std::vector<const RunRecord*>& members) {
    QStringList names;
    std::vector<int> ids;
    for (const RunRecord* member : members) {
        names.append(member->name);
        ids.push_back(member->id);
    }
    DrawnGroup& drawn = groups_drawn_[group];
    drawn.members = std::move(ids);
    drawn.legend = group_legend(names);
    drawn.colour = members.front()->colour;
    for (const ChartKind kind : all_chart_kinds)
        drawGroupChart(kind, group, members, drawn);
}

void ChartGrid::drawGroupChart(ChartKind kind, const QString& group,
                               const std::vector<const RunRecord*>& members, DrawnGroup& drawn) {
    ChartSurface& surface = chart(kind);
    const QString mean_key = groupKey(group, GroupPart::Mean);
    const QString band_key = groupKey(group, GroupPart::Band);
    const GroupChartCurve& curve = groupChartCurve(kind, members, drawn.curves[int(kind)]);
    if (curve.mean.isEmpty()) {
        surface.removeSeries(mean_key);
        surface.removeSeries(band_key);
        return;
    }
    const SeriesStyle line{.colour = run_colour(drawn.colour),
                           .width = 2.0,
                           .faint = false,
                           .dashed = false,
                           .markers = per_epoch(metric_of(kind))};
    if (band_ == GroupBand::Off)
        surface.removeSeries(band_key);
    else
        surface.setBand(band_key, curve.band.low, curve.band.high, line);
    surface.setSeries(mean_key, drawn.legend, curve.mean, line);
}

// A group redrawn without new points (a member renamed or stopped, the theme or the Seeds box
// changed, a chart that did not move while another did) keeps its curves: computing them reads
// every member's points, 5 x 10,000 on each of three charts. A redraw of 20 such groups spent
// 18-35 ms updating series computing them, 2 ms keeping them (scalelab-ui-bench, 2 busy cores).
const ChartGrid::GroupChartCurve& ChartGrid::groupChartCurve(
    ChartKind kind, const std::vector<const RunRecord*>& members, GroupChartCurve& cached) const {
    const bool smooth = smoothed(kind) && smoothing_ > 0.0;
    GroupCurveKey key{
        .members = {}, .axis = x_axis_, .smoothing = smooth ? smoothing_ : 0.0, .band = band_};
    for (const RunRecord* member : members) {
        const std::vector<MetricPoint>& points = member->curve(metric_of(kind));
        key.members.push_back(
            {.id = member->id,
             .points = points.size(),
             .last = points.empty() ? 0 : std::bit_cast<std::uint64_t>(points.back().value)});
    }
    if (key == cached.key)
        return cached;

    std::vector<std::vector<double>> xs(members.size());
    std::vector<std::vector<double>> ys(members.size());
    std::vector<MemberCurve> curves;
    curves.reserve(members.size());
    for (std::size_t m = 0; m < members.size(); ++m) {
        curve_xy(*members[m], kind, x_axis_, xs[m], ys[m]);
        if (smooth)
            smooth_ema_in_place(ys[m], smoothing_);
        curves.push_back({xs[m], ys[m]});
    }
    const GroupCurve curve = group_curve(curves, band_);
    cached = {.key = std::move(key),
              .mean = decimate_min_max(curve.xs, curve.mean),
              .band = band_ == GroupBand::Off ? BandEdges{}
                                              : decimate_band(curve.xs, curve.low, curve.high)};
    return cached;
}

void ChartGrid::eraseGroup(const QString& group) {
    for (auto& surface : charts_)
        for (const GroupPart part : {GroupPart::Mean, GroupPart::Band})
            surface->removeSeries(groupKey(group, part));
    groups_drawn_.erase(group);
}

// A noise scale well under the global batch says the batch is past the point where a larger
// one still pays: the line is what the run's curve is read against, drawn with it.
void ChartGrid::drawGlobalBatch(const RunRecord& record, const QColor& colour, bool references) {
    ChartSurface& surface = chart(ChartKind::NoiseScale);
    const QString key = seriesKey(record.id, SeriesPart::GlobalBatch);
    if (record.curve(Metric::NoiseScale).empty() || record.info.global_batch <= 0 || !references)
        surface.removeSeries(key);
    else
        surface.setHorizontalLine(key, record.info.global_batch, reference_style(colour));
}

void ChartGrid::drawAnnotations(const RunRecord& record, const QColor& colour, bool grouped) {
    const SeriesStyle style{
        .colour = colour, .width = 2.0, .faint = false, .dashed = false, .markers = true};
    int labels = 0;
    for (const RunAnnotation& annotation : run_annotations(record)) {
        const std::optional<ChartKind> kind = chart_of(annotation.metric);
        if (!annotation.at || !kind)
            continue;
        // Each member of a group reaching its targets would write the same note N times over
        // the group's line; the group's row in the run table has its time to target. A member's
        // own trouble (diverged, stalled) is still written: it is never left out.
        if (grouped && annotation.metric == Metric::ValAccuracy)
            continue;
        const QString key = annotationKey(record.id, labels++);
        // The run's notes change as it goes on: a key may have been on another chart.
        for (const ChartKind other : all_chart_kinds)
            if (other != *kind)
                chart(other).removeSeries(key);
        const QPointF at(x_of(*annotation.at, record, x_axis_, per_epoch(annotation.metric)),
                         annotation.at->value);
        chart(*kind).setLabel(key, at, annotation.text, style);
    }
    eraseAnnotations(record.id, labels);
    labels_drawn_[record.id] = labels;
}

// Removes the run's labels from `from` on.
void ChartGrid::eraseAnnotations(int id, int from) {
    const auto drawn = labels_drawn_.find(id);
    if (drawn == labels_drawn_.end())
        return;
    for (int index = from; index < drawn->second; ++index)
        for (auto& surface : charts_)
            surface->removeSeries(annotationKey(id, index));
}

void ChartGrid::eraseRun(int id) {
    for (auto& surface : charts_)
        for (const SeriesPart part :
             {SeriesPart::Curve, SeriesPart::Raw, SeriesPart::WarmupEnd, SeriesPart::GlobalBatch})
            surface->removeSeries(seriesKey(id, part));
    eraseAnnotations(id, 0);
    labels_drawn_.erase(id);
    drawn_.erase(id);
}

}  // namespace scalelab
