#include "scaling_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "empty_state_label.h"
#include "run_collection.h"
#include "run_palette.h"

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
    const RunRecord* first = runs.find(group.points.front().run_id);
    return run_colour(first != nullptr ? first->colour : 0);
}

}  // namespace

ScalingView::ScalingView(RunCollection& runs, QWidget* parent)
    : QWidget(parent), runs_(runs), chart_(make_chart_surface()) {
    chart_->setTitle(tr("Throughput against device count"));
    chart_->setAxisTitles(tr("Devices"), tr("Images/s"));

    empty_state_ = make_empty_state_label(
        tr("Run the same configuration with different device counts to see scaling.\n\n"
           "Each run becomes a point (devices, mean images/s), next to the ideal of perfect "
           "linear scaling."));

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
        new QLabel(tr("Efficiency: images/s over the dashed ideal line, linear from "
                      "the group's smallest device count."));
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

QList<QPointF> ScalingView::idealLine(const ScalingGroup& group) {
    const int largest = group.points.back().devices;
    return {QPointF(group.base_devices, ideal_images_per_s(group, group.base_devices)),
            QPointF(largest, ideal_images_per_s(group, largest))};
}

void ScalingView::scheduleRedraw() {
    if (!redraw_timer_.isActive())
        redraw_timer_.start();
}

void ScalingView::redrawNow() {
    redraw_timer_.stop();
    groups_ = scaling_groups(runs_);
    for (int index = int(groups_.size()); index < drawn_groups_; ++index) {
        chart_->removeSeries(pointsKey(index));
        chart_->removeSeries(idealKey(index));
    }
    for (int index = 0; index < int(groups_.size()); ++index) {
        const ScalingGroup& group = groups_[std::size_t(index)];
        QList<QPointF> points;
        for (const ScalingPoint& point : group.points)
            points.append(QPointF(point.devices, point.images_per_s));
        SeriesStyle measured;
        measured.colour = group_colour(runs_, group);
        measured.markers = true;
        chart_->setSeries(pointsKey(index), group.label, points, measured);
        SeriesStyle ideal;
        ideal.colour = measured.colour;
        ideal.width = 1.5;
        ideal.dashed = true;
        chart_->setSeries(idealKey(index), {}, idealLine(group), ideal);
    }
    drawn_groups_ = int(groups_.size());
    if (!groups_.empty())
        chart_->fitAxes();
    fillPointList();
    pages_->setCurrentWidget(groups_.empty() ? static_cast<QWidget*>(empty_state_) : content_);
}

void ScalingView::fillPointList() {
    point_list_->clear();
    for (const ScalingGroup& group : groups_) {
        auto* heading = new QTreeWidgetItem(point_list_, {group.label});
        heading->setIcon(0, swatch(group_colour(runs_, group)));
        heading->setToolTip(0, group.label);
        QFont bold = heading->font(0);
        bold.setBold(true);
        heading->setFont(0, bold);
        heading->setFirstColumnSpanned(true);
        for (const ScalingPoint& point : group.points) {
            const RunRecord* run = runs_.find(point.run_id);
            auto* item = new QTreeWidgetItem(
                heading, {point.devices == 1 ? tr("1 device") : tr("%1 devices").arg(point.devices),
                          QString::number(point.images_per_s, 'f', 0),
                          QStringLiteral("%1%").arg(point.efficiency * 100.0, 0, 'f', 0),
                          run != nullptr ? run->name : QString()});
            for (int column : {DevicesColumn, ImagesPerSecondColumn, EfficiencyColumn})
                item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
        }
    }
    point_list_->expandAll();
}

void ScalingView::setDarkTheme(bool dark) {
    chart_->setDarkTheme(dark);
}

void ScalingView::setFontScale(qreal scale) {
    chart_->setFontScale(scale);
}

}  // namespace scalelab
