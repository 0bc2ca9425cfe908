#pragma once

#include <QList>
#include <QPointF>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <set>
#include <vector>

#include "chart_surface.h"
#include "steps_to_target.h"

class QComboBox;
class QLabel;

namespace scalelab {

class RunCollection;

// The steps, and the training images, each shown run took to first reach a validation accuracy
// target, against its global batch (Shallue et al. 2018): two log-log charts side by side, one
// point per run in its colour, with the dashed line of perfect scaling (steps × batch constant
// from the smallest batch's point). A group of repeats (two or more of its members reached the
// target) is one point instead, the mean of its members with an error bar of ± 1 standard
// deviation, named "resnet8 batch 256 (3 seeds)" after the members averaged. Above them a selector
// of the targets the runs record, below them the runs that did not reach the target.
//
// Redraws at most five times a second, after runs are added, changed, removed or grow.
class StepsToTargetView : public QWidget {
    Q_OBJECT

  public:
    static constexpr int redraw_interval_ms = 200;
    // The target shown while no target is reached by two runs.
    static constexpr double fallback_target = 0.85;

    explicit StepsToTargetView(RunCollection& runs, QWidget* parent = nullptr);
    ~StepsToTargetView() override;

    ChartSurface& stepsChart() { return *steps_chart_; }
    ChartSurface& imagesChart() { return *images_chart_; }
    // The target drawn: the one chosen here or in the selector; until one is, the highest target
    // reached by at least two shown runs, else fallback_target.
    double target() const { return target_; }
    void setTarget(double target);
    // The runs as last drawn.
    const StepsToTarget& shown() const { return shown_; }
    // The keys of the series on both charts.
    static QString runKey(int run_id);
    static QString perfectScalingKey();
    // A group's mean point and its error bar.
    static QString groupKey(const QString& group);
    static QString errorBarKey(const QString& group);
    // The groups as last drawn.
    const std::vector<StepsToTargetGroup>& shownGroups() const { return groups_; }

  public slots:
    // Redraws now instead of at the next timer tick.
    void redrawNow();
    void setDarkTheme(bool dark);
    void setFontScale(qreal scale);

  private:
    void scheduleRedraw();
    // Shown runs that have started.
    std::vector<const RunRecord*> shownRuns() const;
    // The targets `runs` aim at or reached, ascending.
    static std::vector<double> targetsOf(const std::vector<const RunRecord*>& runs);
    void fillSelector(std::vector<double> targets);
    void draw(ChartSurface& chart, const QString& quantity, const QList<QPointF>& perfect,
              double (*value)(const StepsToTargetPoint&), Spread StepsToTargetGroup::*spread);
    void drawGroups(ChartSurface& chart, Spread StepsToTargetGroup::*spread);
    // Removes the series of the runs and groups no longer drawn.
    void eraseStale(const std::set<int>& runs, const std::set<QString>& groups);
    void describeNotReached(bool any_run);

    RunCollection& runs_;
    std::unique_ptr<ChartSurface> steps_chart_;
    std::unique_ptr<ChartSurface> images_chart_;
    QComboBox* selector_ = nullptr;
    QLabel* not_reached_ = nullptr;
    QTimer redraw_timer_;
    double target_ = fallback_target;
    bool target_chosen_ = false;
    StepsToTarget shown_;
    std::vector<StepsToTargetGroup> groups_;
    std::set<int> drawn_runs_;        // runs with series on the charts
    std::set<QString> drawn_groups_;  // groups with series on the charts
};

}  // namespace scalelab
