#pragma once

#include <QList>
#include <QPointF>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <vector>

#include "chart_surface.h"
#include "run_comparison.h"

class QLabel;
class QStackedWidget;
class QTreeWidget;

namespace scalelab {

class RunCollection;

// Images/s against device count for every group of shown runs that differ only in their device
// count (scaling_groups()): each group's mean per device count with markers, an error bar of ± 1
// standard deviation over repeated runs, the ideal dashed (devices × its 1-device runs), and beside
// the chart each point's figures and efficiency. Without any group it explains how to get one.
//
// Redraws at most five times a second, after runs are added, changed or removed.
class ScalingView : public QWidget {
    Q_OBJECT

  public:
    static constexpr int redraw_interval_ms = 200;

    explicit ScalingView(RunCollection& runs, QWidget* parent = nullptr);
    ~ScalingView() override;

    ChartSurface& chart() { return *chart_; }
    // The groups as last drawn.
    const std::vector<ScalingGroup>& groups() const { return groups_; }
    // The keys of group `index`'s series on the chart.
    static QString pointsKey(int index);
    static QString idealKey(int index);
    // The spread bar of point `point` of group `group` (drawn for repeated runs only).
    static QString spreadKey(int group, int point);
    // The ideal line of a group: its points' ideal images/s (none without a 1-device point).
    static QList<QPointF> idealLine(const ScalingGroup& group);

  public slots:
    // Redraws now instead of at the next timer tick.
    void redrawNow();
    void setDarkTheme(bool dark);
    void setFontScale(qreal scale);

  private:
    void scheduleRedraw();
    void drawGroup(int index);
    void fillPointList();

    RunCollection& runs_;
    std::unique_ptr<ChartSurface> chart_;
    QStackedWidget* pages_ = nullptr;
    QLabel* empty_state_ = nullptr;
    QWidget* content_ = nullptr;
    QTreeWidget* point_list_ = nullptr;
    QTimer redraw_timer_;
    std::vector<ScalingGroup> groups_;
    QStringList drawn_keys_;  // the series on the chart
};

}  // namespace scalelab
