#pragma once

#include <QTimer>
#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

#include "assessment.h"
#include "lesson.h"

class QLabel;
class QPushButton;
class QScrollArea;
class QTreeWidget;
class QTreeWidgetItem;

namespace scalelab {

class RunCollection;

// The open lesson, beside the charts: its title, what to look for, which setting was chosen (a
// laptop's or a GPU workstation's), the button that queues its runs, and then each run's state
// and result; for the assessment, pass or fail with the figures; and the lesson's claims about
// its runs, each held or not with the values measured (shown as they are, a claim that did not
// hold included). A lesson run with repeats is one line: its group's progress and the mean and
// spread of its results.
//
// The panel only shows and asks: the window queues the runs (runLessonRequested) and tells the
// panel their ids (setRunIds). Run states are refreshed at most five times a second.
class LessonPanel : public QWidget {
    Q_OBJECT

  public:
    static constexpr int refresh_interval_ms = 200;

    explicit LessonPanel(RunCollection& runs, QWidget* parent = nullptr);

    // Shows `lesson`; the runs of the lesson shown before are no longer followed here.
    void setLesson(const Lesson& lesson);
    const std::optional<Lesson>& lesson() const { return lesson_; }
    // The runs queued for the lesson, by lesson run in lesson order (empty until it is run).
    void setRunIds(LessonRunIds ids);
    const LessonRunIds& runIds() const { return run_ids_; }
    // The assessment's verdict for one of the lesson's runs (Pending without an assessment).
    AssessmentVerdict verdict(int runId) const;
    // The text of the state and result columns for row `row` (tests read what the user sees).
    QString stateText(int row) const;
    QString resultText(int row) const;
    // The lesson's claims judged on its runs, in lesson order (Pending before they end).
    std::vector<ClaimVerdict> claimVerdicts() const;

  signals:
    void runLessonRequested();
    // A "Show ..." button for a view the lesson names (scaling, steps to target, time breakdown).
    void viewRequested(scalelab::LessonChart chart);

  public slots:
    // Re-reads the runs' states now instead of at the next timer tick.
    void refreshNow();

  protected:
    // Colours the runs and verdicts in a new theme's colours.
    void changeEvent(QEvent* event) override;

  private:
    void scheduleRefresh();
    bool follows(int runId) const;
    QString resultFor(int runId) const;
    // A lesson run with repeats: how its members ended, and the spread of their results.
    QString groupStateFor(const std::vector<int>& members) const;
    QString groupResultFor(const std::vector<int>& members) const;
    // How many of `members` passed the assessment and how many failed.
    std::pair<int, int> assessed(const std::vector<int>& members) const;
    void refreshRow(QTreeWidgetItem* item, const std::vector<int>& members);
    void showClaims();

    RunCollection& runs_;
    std::optional<Lesson> lesson_;
    LessonRunIds run_ids_;
    QLabel* title_ = nullptr;
    QLabel* explanation_ = nullptr;
    QLabel* setting_ = nullptr;
    QLabel* assessment_ = nullptr;
    QLabel* claims_ = nullptr;  // "What this lesson claims", each with its verdict
    QScrollArea* claims_area_ = nullptr;
    QWidget* view_buttons_ = nullptr;
    QPushButton* run_button_ = nullptr;
    QTreeWidget* run_list_ = nullptr;
    QTimer refresh_timer_;
};

}  // namespace scalelab
