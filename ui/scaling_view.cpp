#include "scaling_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <utility>

#include "empty_state_label.h"
#include "run_collection.h"
#include "run_palette.h"
#include "run_summary.h"

namespace scalelab {

namespace {

enum PointColumn { DevicesColumn, ImagesPerSecondColumn, EfficiencyColumn, RunColumn };

QIcon swatch(const QColor& colour) {
    QPixmap pixmap(12, 12);
    pixmap.fill(colour);
    return QIcon(pixmap);
}

// A group is drawn in the colour of its first run, so that it can be found in the run table.
QColor group_colour(const RunCollection& runs, const ScalingGroup& group) {
    const RunRecord* first = runs.find(group.points.front().run_ids.front());
    return run_colour(first != nullptr ? first->colour : 0);
}

// The run a point stands for, or "3 runs" for repeats.
QString runs_text(const RunCollection& runs, const ScalingPoint& point) {
    const RunRecord* run = runs.find(point.run_ids.front());
    const QString text = point.run_ids.size() > 1
                             ? ScalingView::tr("%1 runs").arg(point.run_ids.size())
                         : run != nullptr ? run->name
                                          : QString();
    return point.disturbed ? ScalingView::tr("%1 (disturbed)").arg(text) : text;
}

}  // namespace

ScalingView::ScalingView(RunCollection& runs, QWidget* parent)
    : QWidget(parent), runs_(runs), chart_(make_chart_surface()) {
    chart_->setTitle(tr("Throughput against device count"));
    chart_->setAxisTitles(tr("Devices"), tr("Images/s"));

    empty_state_ = make_empty_state_label(
        tr("Run the same configuration with different device counts to see scaling.\n\n"
           "Each device count becomes a point (devices, mean images/s of its runs), next to the "
           "ideal of perfect linear scaling from the 1-device runs."));

    point_list_ = new QTreeWidget;
    point_list_->setObjectName(QStringLiteral("scalingPoints"));
    point_list_->setHeaderLabels({tr("Devices"), tr("Images/s"), tr("Efficiency"), tr("Run")});
    point_list_->setRootIsDecorated(false);
    point_list_->setIndentation(0);
    point_list_->setSelectionMode(QAbstractItemView::NoSelection);
    point_list_->setFocusPolicy(Qt::NoFocus);
    point_list_->setIconSize(QSize(12, 12));
    point_list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    point_list_->setTextElideMode(Qt::ElideRight);
    point_list_->header()->setStretchLastSection(true);
    // Fixed widths: the group headings span every column and would widen the first.
    const QFontMetrics metrics = point_list_->fontMetrics();
    const auto fit = [&](const QString& sample) { return metrics.horizontalAdvance(sample) + 16; };
    point_list_->setColumnWidth(DevicesColumn, fit(tr("16 devices")));
    point_list_->setColumnWidth(ImagesPerSecondColumn, fit(tr("Images/s")));
    point_list_->setColumnWidth(EfficiencyColumn, fit(tr("Efficiency")));
    for (int column : {DevicesColumn, ImagesPerSecondColumn, EfficiencyColumn})
        point_list_->headerItem()->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);

    auto* caption =
        new QLabel(tr("Efficiency: mean images/s over the dashed ideal, devices × the mean of "
                      "the 1-device runs with the same configuration and threads per device. "
                      "Bars: the slowest to the fastest of repeated runs."));
    caption->setWordWrap(true);
    caption->setForegroundRole(QPalette::PlaceholderText);

    // Wide enough for the figures and a run name; long group headings are elided (their tool
    // tip and the chart's legend have them whole).
    auto* side = new QWidget;
    side->setFixedWidth(point_list_->columnWidth(DevicesColumn) +
                        point_list_->columnWidth(ImagesPerSecondColumn) +
                        point_list_->columnWidth(EfficiencyColumn) + fit(tr("a longer run name")));
    auto* side_layout = new QVBoxLayout(side);
    side_layout->setContentsMargins(0, 8, 8, 8);
    side_layout->addWidget(point_list_, 1);
    side_layout->addWidget(caption);

    content_ = new QWidget;
    auto* content_layout = new QHBoxLayout(content_);
    content_layout->setContentsMargins(0, 0, 0, 0);
    content_layout->addWidget(chart_->widget(), 1);
    content_layout->addWidget(side);

    pages_ = new QStackedWidget;
    pages_->addWidget(empty_state_);
    pages_->addWidget(content_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_);

    redraw_timer_.setSingleShot(true);
    redraw_timer_.setInterval(redraw_interval_ms);
    connect(&redraw_timer_, &QTimer::timeout, this, &ScalingView::redrawNow);
    for (const auto signal :
         {&RunCollection::runAdded, &RunCollection::runChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, &ScalingView::scheduleRedraw);
    redrawNow();
}

ScalingView::~ScalingView() = default;

QString ScalingView::pointsKey(int index) {
    return QStringLiteral("scaling %1").arg(index);
}

QString ScalingView::idealKey(int index) {
    return QStringLiteral("ideal %1").arg(index);
}

QString ScalingView::spreadKey(int group, int point) {
    return QStringLiteral("spread %1 %2").arg(group).arg(point);
}

QList<QPointF> ScalingView::idealLine(const ScalingGroup& group) {
    QList<QPointF> line;
    for (const ScalingPoint& point : group.points)
        if (point.ideal_images_per_s)
            line.append(QPointF(point.devices, *point.ideal_images_per_s));
    return line;
}

void ScalingView::scheduleRedraw() {
    if (!redraw_timer_.isActive())
        redraw_timer_.start();
}

void ScalingView::redrawNow() {
    redraw_timer_.stop();
    groups_ = scaling_groups(runs_);
    const QStringList drawn_before = std::exchange(drawn_keys_, {});
    for (int index = 0; index < int(groups_.size()); ++index)
        drawGroup(index);
    for (const QString& key : drawn_before)
        if (!drawn_keys_.contains(key))
            chart_->removeSeries(key);
    if (!groups_.empty())
        chart_->fitAxes();
    fillPointList();
    pages_->setCurrentWidget(groups_.empty() ? static_cast<QWidget*>(empty_state_) : content_);
}

void ScalingView::drawGroup(int index) {
    const ScalingGroup& group = groups_[std::size_t(index)];
    const auto draw = [&](const QString& key, const QString& name, const QList<QPointF>& points,
                          const SeriesStyle& style) {
        chart_->setSeries(key, name, points, style);
        drawn_keys_.append(key);
    };
    QList<QPointF> means;
    for (const ScalingPoint& point : group.points)
        means.append(QPointF(point.devices, point.images_per_s));
    SeriesStyle measured;
    measured.colour = group_colour(runs_, group);
    measured.markers = true;
    draw(pointsKey(index), group.label, means, measured);
    // Repeats: an error bar of one standard deviation either side of the mean at the device
    // count (the same spread as a group's band on the charts).
    SeriesStyle bar;
    bar.colour = measured.colour;
    bar.width = 1.5;
    for (int p = 0; p < int(group.points.size()); ++p)
        if (const ScalingPoint& point = group.points[std::size_t(p)]; point.run_ids.size() > 1)
            draw(spreadKey(index, p), {},
                 {QPointF(point.devices, point.images_per_s - point.stddev_images_per_s),
                  QPointF(point.devices, point.images_per_s + point.stddev_images_per_s)},
                 bar);
    if (const QList<QPointF> ideal_points = idealLine(group); ideal_points.size() >= 2) {
        SeriesStyle ideal;
        ideal.colour = measured.colour;
        ideal.width = 1.5;
        ideal.dashed = true;
        draw(idealKey(index), {}, ideal_points, ideal);
    }
}

void ScalingView::fillPointList() {
    point_list_->clear();
    for (const ScalingGroup& group : groups_) {
        auto* heading = new QTreeWidgetItem(point_list_, {group.label});
        heading->setIcon(0, swatch(group_colour(runs_, group)));
        heading->setToolTip(0, group.has_baseline()
                                   ? group.label
                                   : tr("%1\nNo 1-device run to compare with: run this "
                                        "configuration on 1 device for the efficiency.")
                                         .arg(group.label));
        QFont bold = heading->font(0);
        bold.setBold(true);
        heading->setFont(0, bold);
        heading->setFirstColumnSpanned(true);
        for (const ScalingPoint& point : group.points) {
            auto* item = new QTreeWidgetItem(
                heading,
                {point.devices == 1 ? tr("1 device") : tr("%1 devices").arg(point.devices),
                 whole_number_text(point.images_per_s),
                 point.efficiency ? QStringLiteral("%1%").arg(*point.efficiency * 100.0, 0, 'f', 0)
                                  : tr("—"),
                 runs_text(runs_, point)});
            const QString spread = point.run_ids.size() > 1
                                       ? tr("Mean of %1 runs: %2 ± %3 images/s (%4 to %5)")
                                             .arg(point.run_ids.size())
                                             .arg(whole_number_text(point.images_per_s),
                                                  whole_number_text(point.stddev_images_per_s),
                                                  whole_number_text(point.min_images_per_s),
                                                  whole_number_text(point.max_images_per_s))
                                       : QString();
            for (int column : {DevicesColumn, ImagesPerSecondColumn, EfficiencyColumn}) {
                item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
                item->setToolTip(column, spread);
            }
            if (!point.efficiency)
                item->setToolTip(EfficiencyColumn, tr("No 1-device run to compare with"));
        }
    }
    point_list_->expandAll();
}

void ScalingView::setDarkTheme(bool dark) {
    chart_->setDarkTheme(dark);
    scheduleRedraw();  // run colours are the theme's
}

void ScalingView::setFontScale(qreal scale) {
    chart_->setFontScale(scale);
}

}  // namespace scalelab
