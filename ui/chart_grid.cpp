#include "chart_grid.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "curve_decimation.h"
#include "curve_smoothing.h"
#include "run_collection.h"
#include "run_palette.h"

namespace scalelab {

namespace {

constexpr int slider_steps = 100;  // the smoothing slider moves in steps of 0.01

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
    }
    return Metric::TrainLoss;
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

double x_of(const MetricPoint& point, const RunRecord& record, XAxis axis, bool per_epoch) {
    switch (axis) {
        case XAxis::Step:
            return double(point.step);
        case XAxis::Epoch:
            if (per_epoch || record.info.steps_per_epoch <= 0)
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

QList<QPointF> to_points(const std::vector<double>& xs, const std::vector<double>& ys) {
    QList<QPointF> points;
    points.reserve(qsizetype(xs.size()));
    for (std::size_t i = 0; i < xs.size(); ++i)
        points.append(QPointF(xs[i], ys[i]));
    return points;
}

}  // namespace

ChartGrid::ChartGrid(RunCollection& runs, QWidget* parent) : QWidget(parent), runs_(runs) {
    auto* grid = new QGridLayout;
    grid->setSpacing(6);
    for (const ChartKind kind : all_chart_kinds) {
        const int index = int(kind);
        charts_[index] = make_chart_surface(this);
        charts_[index]->setTitle(title(kind));
        grid->addWidget(charts_[index]->widget(), index / 2, index % 2);
    }
    updateAxisTitles();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(createControls());
    layout->addLayout(grid, 1);

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
    auto* controls = new QWidget;
    auto* row = new QHBoxLayout(controls);
    row->setContentsMargins(4, 4, 4, 0);

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
    smoothing_slider_->setMinimumWidth(160);
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

    row->addWidget(x_label);
    row->addWidget(x_axis_box_);
    row->addSpacing(16);
    row->addWidget(smoothing_label);
    row->addWidget(smoothing_slider_);
    row->addWidget(smoothing_value_);
    row->addSpacing(16);
    row->addWidget(log_loss_box_);
    row->addStretch(1);
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
    }
    return {};
}

QString ChartGrid::seriesKey(int runId, SeriesPart part) {
    static constexpr std::array<const char*, 3> part_names = {"curve", "raw", "warmup-end"};
    return QStringLiteral("run-%1-%2").arg(runId).arg(QLatin1String(part_names[int(part)]));
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

void ChartGrid::setDarkTheme(bool dark) {
    for (auto& surface : charts_)
        surface->setDarkTheme(dark);
}

bool ChartGrid::setFontScale(double scale) {
    if (!(scale > 0.0) || !std::isfinite(scale))
        return false;
    for (auto& surface : charts_)
        surface->setFontScale(scale);
    return true;
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
    for (const int id : std::exchange(dirty_, {})) {
        const RunRecord* record = runs_.find(id);
        if (record != nullptr && record->visible)
            drawRun(*record);
        else
            eraseRun(id);
    }
    for (auto& surface : charts_)
        surface->fitAxes();
    ++redraw_count_;
    emit redrawn();
}

void ChartGrid::drawRun(const RunRecord& record) {
    for (const ChartKind kind : all_chart_kinds)
        drawChart(kind, record);
    drawn_.insert(record.id);
}

void ChartGrid::drawChart(ChartKind kind, const RunRecord& record) {
    ChartSurface& surface = chart(kind);
    const QString curve_key = seriesKey(record.id, SeriesPart::Curve);
    const QString raw_key = seriesKey(record.id, SeriesPart::Raw);
    const QString warmup_key = seriesKey(record.id, SeriesPart::WarmupEnd);
    const std::vector<MetricPoint>& curve = record.curve(metric_of(kind));
    if (curve.empty()) {
        for (const QString& key : {curve_key, raw_key, warmup_key})
            surface.removeSeries(key);
        return;
    }

    const bool per_epoch = kind == ChartKind::ValAccuracy;
    std::vector<double> xs;
    std::vector<double> ys;
    xs.reserve(curve.size());
    ys.reserve(curve.size());
    for (const MetricPoint& point : curve) {
        xs.push_back(x_of(point, record, x_axis_, per_epoch));
        ys.push_back(point.value);
    }

    const QColor colour = run_colour(record.colour);
    const SeriesStyle line{
        .colour = colour, .width = 2.0, .faint = false, .dashed = false, .markers = per_epoch};
    if (smoothed(kind) && smoothing_ > 0.0) {
        const SeriesStyle faint{
            .colour = colour, .width = 1.0, .faint = true, .dashed = false, .markers = false};
        surface.setSeries(raw_key, {}, decimate_min_max(to_points(xs, ys)), faint);
        surface.setSeries(curve_key, record.name,
                          decimate_min_max(to_points(xs, smooth_ema(ys, smoothing_))), line);
    } else {
        surface.removeSeries(raw_key);
        surface.setSeries(curve_key, record.name, decimate_min_max(to_points(xs, ys)), line);
    }

    if (const std::optional<double> warmup_x = warmup_end_x(record, x_axis_)) {
        const SeriesStyle dashed{
            .colour = colour, .width = 1.5, .faint = false, .dashed = true, .markers = false};
        surface.setVerticalLine(warmup_key, *warmup_x, dashed);
    } else {
        surface.removeSeries(warmup_key);
    }
}

void ChartGrid::eraseRun(int id) {
    for (auto& surface : charts_)
        for (const SeriesPart part : {SeriesPart::Curve, SeriesPart::Raw, SeriesPart::WarmupEnd})
            surface->removeSeries(seriesKey(id, part));
    drawn_.erase(id);
}

}  // namespace scalelab
