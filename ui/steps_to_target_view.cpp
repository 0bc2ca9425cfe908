#include "steps_to_target_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "group_curves.h"
#include "run_collection.h"
#include "run_palette.h"

namespace scalelab {

namespace {

// Targets are fractions with a few decimals; these are the same target.
constexpr double same_target = 1e-9;
const QColor perfect_scaling_colour(0x80, 0x80, 0x80);  // grey: readable on both themes

QString target_percent_text(double target) {
    return QStringLiteral("%1%").arg(QString::number(target * 100.0, 'g', 4));
}

double steps_of(const StepsToTargetPoint& point) {
    return double(point.steps);
}

double images_of(const StepsToTargetPoint& point) {
    return point.images;
}

}  // namespace

StepsToTargetView::StepsToTargetView(RunCollection& runs, QWidget* parent)
    : QWidget(parent),
      runs_(runs),
      steps_chart_(make_chart_surface()),
      images_chart_(make_chart_surface()) {
    steps_chart_->setTitle(tr("Steps to target"));
    images_chart_->setTitle(tr("Images to target"));
    for (ChartSurface* chart : {steps_chart_.get(), images_chart_.get()}) {
        chart->setLogX(true);
        chart->setLogY(true);
    }

    selector_ = new QComboBox;
    selector_->setObjectName(QStringLiteral("targetSelector"));
    selector_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    auto* selector_label = new QLabel(tr("&Target validation accuracy:"));
    selector_label->setBuddy(selector_);
    connect(selector_, &QComboBox::activated, this,
            [this](int index) { setTarget(selector_->itemData(index).toDouble()); });

    not_reached_ = new QLabel;
    not_reached_->setObjectName(QStringLiteral("notReached"));
    not_reached_->setWordWrap(true);
    not_reached_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* top = new QHBoxLayout;
    top->addWidget(selector_label);
    top->addWidget(selector_);
    top->addStretch(1);
    auto* charts = new QHBoxLayout;
    charts->addWidget(steps_chart_->widget(), 1);
    charts->addWidget(images_chart_->widget(), 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(charts, 1);
    layout->addWidget(not_reached_);

    redraw_timer_.setSingleShot(true);
    redraw_timer_.setInterval(redraw_interval_ms);
    connect(&redraw_timer_, &QTimer::timeout, this, &StepsToTargetView::redrawNow);
    for (const auto signal : {&RunCollection::runAdded, &RunCollection::runChanged,
                              &RunCollection::curvesChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, &StepsToTargetView::scheduleRedraw);
    redrawNow();
}

StepsToTargetView::~StepsToTargetView() = default;

QString StepsToTargetView::runKey(int run_id) {
    return QStringLiteral("run %1").arg(run_id);
}

QString StepsToTargetView::groupKey(const QString& group) {
    return QStringLiteral("group %1").arg(group);
}

QString StepsToTargetView::errorBarKey(const QString& group) {
    return QStringLiteral("group %1 spread").arg(group);
}

QString StepsToTargetView::perfectScalingKey() {
    return QStringLiteral("perfect scaling");
}

void StepsToTargetView::setTarget(double target) {
    target_chosen_ = true;
    if (target == target_)
        return;
    target_ = target;
    redrawNow();
}

void StepsToTargetView::scheduleRedraw() {
    if (!redraw_timer_.isActive())
        redraw_timer_.start();
}

std::vector<const RunRecord*> StepsToTargetView::shownRuns() const {
    std::vector<const RunRecord*> shown;
    for (const int id : runs_.ids()) {
        const RunRecord* run = runs_.find(id);
        if (run != nullptr && run->visible && run->started)
            shown.push_back(run);
    }
    return shown;
}

std::vector<double> StepsToTargetView::targetsOf(const std::vector<const RunRecord*>& runs) {
    std::vector<double> targets;
    for (const RunRecord* run : runs) {
        targets.insert(targets.end(), run->spec.targets.cbegin(), run->spec.targets.cend());
        if (run->spec.target_accuracy > 0)
            targets.push_back(run->spec.target_accuracy);
        for (const TargetReached& reached : run->targets)
            targets.push_back(reached.target);
    }
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end(),
                              [](double a, double b) { return std::abs(a - b) < same_target; }),
                  targets.end());
    return targets;
}

void StepsToTargetView::redrawNow() {
    redraw_timer_.stop();
    const std::vector<const RunRecord*> runs = shownRuns();
    std::vector<double> targets = targetsOf(runs);
    if (!target_chosen_) {
        target_ = fallback_target;
        for (auto target = targets.crbegin(); target != targets.crend(); ++target)
            if (steps_to_target(runs, *target).reached.size() >= 2) {
                target_ = *target;
                break;
            }
    }
    fillSelector(std::move(targets));
    shown_ = steps_to_target(runs, target_);

    QList<QPointF> perfect_steps;
    QList<QPointF> perfect_images;
    // Two batches at least: a line of one point says nothing.
    if (shown_.perfect_scaling.size() >= 2) {
        // Steps × batch constant: the same training images at every batch.
        const double images = shown_.reached.front().images;
        for (const auto& [batch, steps] : shown_.perfect_scaling) {
            perfect_steps.append(QPointF(batch, steps));
            perfect_images.append(QPointF(batch, images));
        }
    }
    groups_ = steps_to_target_groups(shown_, runs);
    std::set<int> in_groups;
    std::set<QString> groups;
    for (const StepsToTargetGroup& group : groups_) {
        in_groups.insert(group.run_ids.begin(), group.run_ids.end());
        groups.insert(group.group);
    }
    std::set<int> drawn;
    for (const StepsToTargetPoint& point : shown_.reached)
        if (!in_groups.contains(point.run_id))
            drawn.insert(point.run_id);
    eraseStale(drawn, groups);
    draw(*steps_chart_, tr("Steps"), perfect_steps, steps_of, &StepsToTargetGroup::steps);
    draw(*images_chart_, tr("Training images"), perfect_images, images_of,
         &StepsToTargetGroup::images);
    describeNotReached(!runs.empty());
}

// The targets the runs know and the one drawn, with the one drawn selected.
void StepsToTargetView::fillSelector(std::vector<double> targets) {
    if (std::none_of(targets.cbegin(), targets.cend(),
                     [this](double target) { return std::abs(target - target_) < same_target; }))
        targets.insert(std::lower_bound(targets.begin(), targets.end(), target_), target_);
    const QSignalBlocker blocker(selector_);
    // Filled again only when the targets change, so that an open list stays as it is.
    bool same = selector_->count() == int(targets.size());
    for (int index = 0; same && index < selector_->count(); ++index)
        same = selector_->itemData(index).toDouble() == targets[std::size_t(index)];
    if (!same) {
        selector_->clear();
        for (const double target : targets)
            selector_->addItem(target_percent_text(target), target);
    }
    const auto current = std::find_if(targets.cbegin(), targets.cend(), [this](double target) {
        return std::abs(target - target_) < same_target;
    });
    selector_->setCurrentIndex(int(current - targets.cbegin()));
}

void StepsToTargetView::eraseStale(const std::set<int>& runs, const std::set<QString>& groups) {
    for (ChartSurface* chart : {steps_chart_.get(), images_chart_.get()}) {
        for (const int id : drawn_runs_)
            if (!runs.contains(id))
                chart->removeSeries(runKey(id));
        for (const QString& group : drawn_groups_)
            if (!groups.contains(group)) {
                chart->removeSeries(groupKey(group));
                chart->removeSeries(errorBarKey(group));
            }
    }
    drawn_runs_ = runs;
    drawn_groups_ = groups;
}

void StepsToTargetView::draw(ChartSurface& chart, const QString& quantity,
                             const QList<QPointF>& perfect,
                             double (*value)(const StepsToTargetPoint&),
                             Spread StepsToTargetGroup::*spread) {
    chart.setAxisTitles(tr("Global batch"),
                        tr("%1 to reach %2").arg(quantity, target_percent_text(target_)));
    drawGroups(chart, spread);
    for (const StepsToTargetPoint& point : shown_.reached) {
        if (!drawn_runs_.contains(point.run_id))
            continue;  // drawn in its group's mean
        const RunRecord* run = runs_.find(point.run_id);
        SeriesStyle style;
        style.colour = run_colour(run->colour);
        style.markers = true;
        chart.setSeries(runKey(point.run_id), run->name,
                        {QPointF(point.global_batch, value(point))}, style);
    }
    if (perfect.isEmpty()) {
        chart.removeSeries(perfectScalingKey());
    } else {
        SeriesStyle style;
        style.colour = perfect_scaling_colour;
        style.width = 1.5;
        style.dashed = true;
        chart.setSeries(perfectScalingKey(), tr("Perfect scaling"), perfect, style);
    }
    chart.fitAxes();
}

// Each group's mean in its first member's colour, with a bar from mean - std to mean + std.
void StepsToTargetView::drawGroups(ChartSurface& chart, Spread StepsToTargetGroup::*spread) {
    for (const StepsToTargetGroup& group : groups_) {
        QStringList names;
        for (const int id : group.run_ids)
            names.append(runs_.find(id)->name);
        const Spread& figure = group.*spread;
        SeriesStyle style;
        style.colour = run_colour(runs_.find(group.run_ids.front())->colour);
        style.markers = true;
        chart.setSeries(groupKey(group.group), group_legend(names),
                        {QPointF(group.global_batch, figure.mean)}, style);
        SeriesStyle bar;
        bar.colour = style.colour;
        bar.width = 1.5;
        chart.setSeries(errorBarKey(group.group), {},
                        {QPointF(group.global_batch, figure.mean - figure.stddev),
                         QPointF(group.global_batch, figure.mean + figure.stddev)},
                        bar);
    }
}

void StepsToTargetView::describeNotReached(bool any_run) {
    if (!any_run) {
        not_reached_->setText(
            tr("Run the same experiment with different global batches (a sweep over the batch "
               "size) to see how many steps each batch needs to reach a validation accuracy."));
        return;
    }
    if (shown_.not_reached.empty()) {
        not_reached_->setText(tr("Every shown run reached %1.").arg(target_percent_text(target_)));
        return;
    }
    QStringList names;
    for (const int id : shown_.not_reached) {
        const RunRecord* run = runs_.find(id);
        names.append(is_active(run->state) ? tr("%1 (still running)").arg(run->name) : run->name);
    }
    not_reached_->setText(
        tr("Did not reach %1: %2.").arg(target_percent_text(target_), names.join(", ")));
}

void StepsToTargetView::setDarkTheme(bool dark) {
    steps_chart_->setDarkTheme(dark);
    images_chart_->setDarkTheme(dark);
    scheduleRedraw();  // run colours are the theme's
}

void StepsToTargetView::setFontScale(qreal scale) {
    steps_chart_->setFontScale(scale);
    images_chart_->setFontScale(scale);
}

}  // namespace scalelab
