#pragma once

#include <QColor>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <cstdint>
#include <vector>

#include "time_breakdown.h"

class QComboBox;
class QLabel;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QStackedWidget;

namespace scalelab {

class RunCollection;
class StackedBarsWidget;

// Where each device's step time goes, averaged over a window of steps: one stacked bar per device
// (data, forward, backward, exposed communication, waiting, optimizer), a dashed line at the mean
// step time, and a hint when a device waits or communicates much of the step, so that stragglers
// and communication-bound runs stand out. The window is the last N steps (following a live run) or
// a from-to range of steps. The steps of the window can be exported as a Chrome trace
// (chrome://tracing, Perfetto).
//
// Only runs trained in this window have timings; a stored run shown here says so. Until a run is
// chosen (setRun or the run box) the view follows the latest running run with timings, or else the
// latest with timings. Redraws at most five times a second.
class TimeBreakdownView : public QWidget {
    Q_OBJECT

  public:
    static constexpr int redraw_interval_ms = 200;
    static constexpr int default_last_steps = 50;
    // A device that waits, communicates without overlap or loads data for this share of the step or
    // more is named in the hints.
    static constexpr double notable_share = 0.2;

    explicit TimeBreakdownView(RunCollection& runs, QWidget* parent = nullptr);
    ~TimeBreakdownView() override;

    // The run shown (0: none).
    int runId() const;
    // The breakdown as last drawn; steps = 0 when none is drawn.
    const TimeBreakdown& shownBreakdown() const { return breakdown_; }
    StackedBarsWidget& bars() { return *bars_; }

    // The colour of a phase in the bars and the legend (Okabe-Ito: told apart with every common
    // colour-vision deficiency).
    static QColor phaseColour(StepPhase phase);
    // Plain statements about what stands out in `breakdown`, one per finding: devices that wait
    // (and the straggler they wait for), exposed communication, data loading, each from
    // notable_share of the step. Empty when nothing does.
    static QStringList hints(const TimeBreakdown& breakdown);
    // "<run name>-steps-<first>-<last>.trace.json" for the window shown.
    QString defaultTraceName() const;

    // Writes the steps shown as a Chrome trace to `path`; false, with `error` saying why, when
    // nothing is shown or the file cannot be written.
    bool exportTrace(const QString& path, QString* error);

  public slots:
    // Shows run `id` from now on, whether or not it has timings (0: follow the latest run).
    void setRun(int id);
    // Averages steps first..last; first > last is refused with a message beside the fields.
    void setWindow(int first, int last);
    // Averages the last `steps` steps, following a live run.
    void setLastSteps(int steps);
    // Asks where to export the trace, then exports it.
    void exportTraceInteractively();
    // Redraws now instead of at the next timer tick.
    void redrawNow();
    void setDarkTheme(bool dark);
    void setFontScale(qreal scale);

  private:
    enum class Window { LastSteps, Range };

    // The constructor's parts, in the order it calls them.
    // The run box, the averaging window's fields and its problem, the export button.
    void buildControls();
    // What shows a run: a notice, or the bars with their caption and hints.
    void buildBody();
    // The controls' two rows above the body, and the empty state in place of both.
    void buildPages();
    void connectControls();
    // Redraws, at most every redraw_interval_ms, as the runs change.
    void followRuns();

    void scheduleRedraw();
    // The runs offered in the run box: those with timings, and the one chosen.
    std::vector<int> offeredRuns() const;
    void fillRunBox(const std::vector<int>& offered);
    // The run followed while none is chosen.
    int latestTimedRun() const;
    void useWindow(Window window);
    void showNotice(const QString& text);
    void showBreakdown();

    RunCollection& runs_;
    int chosen_ = 0;
    Window window_ = Window::LastSteps;
    TimeBreakdown breakdown_;
    QTimer redraw_timer_;

    QStackedWidget* pages_ = nullptr;
    QLabel* empty_state_ = nullptr;
    QWidget* content_ = nullptr;
    QComboBox* run_box_ = nullptr;
    QRadioButton* last_button_ = nullptr;
    QSpinBox* last_steps_ = nullptr;
    QRadioButton* range_button_ = nullptr;
    QSpinBox* from_step_ = nullptr;
    QSpinBox* to_step_ = nullptr;
    QLabel* window_problem_ = nullptr;
    QPushButton* export_button_ = nullptr;
    QStackedWidget* body_ = nullptr;
    QLabel* notice_ = nullptr;
    QWidget* chart_page_ = nullptr;
    QLabel* caption_ = nullptr;
    StackedBarsWidget* bars_ = nullptr;
    QLabel* hint_ = nullptr;
};

}  // namespace scalelab
