#pragma once

#include <QMainWindow>

#include <functional>
#include <vector>

#include "backend/device_inventory.h"
#include "lesson.h"
#include "theme.h"
#include "train/run_spec.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QSplitter;
class QTabWidget;

namespace scalelab {

class ChartGrid;
class ExperimentForm;
class LessonPanel;
class LogPane;
class RunCollection;
class RunFilterBar;
class RunTableModel;
class RunTableView;
class ScalingView;
class StepsToTargetView;
class TimeBreakdownView;
struct ClusterJob;
struct ExportRequest;

// ScaleLab's window: the experiment form on the left, the charts and the scaling view in the
// middle, the run table with its filter bar under them, the log pane at the bottom; the run
// store in use in the status bar.
//
// The window only shows and commands: runs live in the RunCollection it is given (which
// outlives it), training happens on the RunController's threads, and every update reaches the
// window through queued signals, so the GUI thread never waits on the engine.
class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    MainWindow(RunCollection& runs, const DeviceInventory& devices, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The experiment the window opens with: Fashion-MNIST on the small CNN on two devices (two
    // GPUs where there are, otherwise two CPU devices).
    static RunSpec defaultExperiment(const DeviceInventory& devices);

    // The size the window opens at on a screen whose free area (availableGeometry) is
    // `available`: 1500x950, or less where the screen is smaller (a 1366x768 laptop, a 1024x768
    // projector), leaving room for the window manager's frame.
    static QSize firstSize(QSize available);
    // Whether a screen whose free area is `available` is too small to show the form, a lesson,
    // the log and the charts side by side: under 1280x900 (a 1024x768 projector, a 1366x768
    // laptop).
    static bool compactLayoutFor(QSize available);
    // Arranges the docks for a screen whose free area is `available`. On a compact screen the
    // lesson and the log share the left column with the experiment, as tabs, so that the charts
    // and the table keep the width and the height; otherwise the lesson sits on the right and
    // the log at the bottom. The user may move them afterwards (saved with the window state).
    void adaptTo(QSize available);
    // Brings the experiment form to the front of its dock area (its tab on a compact screen).
    void showExperiment();

    ExperimentForm& form() { return *form_; }
    ChartGrid& charts() { return *charts_; }
    RunTableView& table() { return *table_; }
    RunFilterBar& filterBar() { return *filter_bar_; }
    RunTableModel& tableModel() { return *table_model_; }
    ScalingView& scaling() { return *scaling_; }
    StepsToTargetView& stepsToTarget() { return *steps_to_target_; }
    TimeBreakdownView& timeBreakdown() { return *time_breakdown_; }
    LogPane& log() { return *log_; }
    LessonPanel& lessonPanel() { return *lesson_panel_; }
    // The tab shown in the middle (the charts, the scaling view, ...).
    QWidget* currentView() const;

    // Shows `lesson` beside the charts: its explanation and runs in the lesson panel, the charts
    // it names and its x axis. Nothing runs until runLesson().
    void openLesson(const Lesson& lesson);
    // Reads a lesson file and opens it; false with the file's problems (file, line and field
    // each) when it cannot be opened, and the lesson shown before stays.
    bool openLessonFile(const QString& path, QString* error);
    // Queues the open lesson's runs one after another, tagged with the lesson's title, and
    // hides the other runs from the charts (closeLesson() shows them again). Returns their ids
    // (empty without a lesson).
    std::vector<int> runLesson();

    // Opens the run store at `path` and shows its runs. When it cannot be opened (corrupt,
    // unreadable, locked, from a newer ScaleLab), a StoreErrorDialog says why and offers another
    // file, a new store, or going on as before (without a store at start-up: runs in memory
    // only); the bad file is never written. True when a store was opened.
    bool openStore(const QString& path);

    // Writes what `request` names; false with a message naming the file and the reason.
    bool exportTo(const ExportRequest& request, QString* error);
    // Adds the runs of a .scalelab.json file to the store; false with the reason (nothing is
    // imported then). `imported` gets their ids.
    bool importRuns(const QString& path, std::vector<int>* imported, QString* error);
    // The runs as a .scalelab.json file (from the store), or their metrics as CSV.
    bool exportRuns(const std::vector<int>& ids, const QString& path, QString* error);
    bool exportMetricsCsv(const std::vector<int>& ids, const QString& path, QString* error);
    // Writes the form's experiment and an sbatch script for `job` (File > Export cluster job...);
    // false with the reason (the form's problems, cluster_job_problem, the file).
    bool writeClusterJob(const ClusterJob& job, const QString& path, QString* error);
    // Writes the form's experiment as a PyTorch DDP script and its files into `folder` (File >
    // Export as PyTorch script...); false with the reason (the form's problems,
    // pytorch_export_problems, a file).
    bool writePytorchExport(const QString& folder, QString* error);
    // The same for run `runId`'s experiment (its context menu's Export as PyTorch script...).
    bool writeRunPytorchExport(int runId, const QString& folder, QString* error);
    bool presenterMode() const { return presenter_; }
    Theme theme() const { return theme_; }

  public slots:
    void startRun();
    void queueSweep();
    void stopSelectedRun();
    void openExportDialog();
    void openConfig();
    void saveConfig();
    void exportClusterJob();
    void exportPytorchScript();
    void exportRunAsPytorchScript(int runId);
    void chooseStoreToOpen();
    void chooseNewStore();
    void chooseRunsToImport();
    void exportSelectedRuns();
    void exportSelectedMetrics();
    void setPresenterMode(bool on);
    void setTheme(scalelab::Theme theme);
    void newExperimentFrom(int runId);
    void chooseLessonFile();
    // Hides the lesson panel; the runs a lesson run hid are shown again.
    void closeLesson();

  protected:
    void closeEvent(QCloseEvent* event) override;

  private:
    // The constructor's parts, in the order it calls them.
    void buildExperimentDock();  // the form, docked on the left
    // The views' tabs (charts, scaling, steps to target, time breakdown) above the filter bar
    // and the run table.
    void buildCentralArea();
    void buildLogDock();     // the log pane, docked below, fed by the spdlog relay
    void buildLessonDock();  // the lesson panel, docked on the right, hidden until a lesson
    void buildStatusBar();   // the store's path and the runs' status
    // What the form's, the table's and the runs' signals do to the window.
    void connectRunsAndForm();
    // The default experiment in the form, and the window's and docks' first sizes.
    void setFirstState();
    void createActions();
    void createMenus();
    // Lists the shipped lessons and the user's own (re-read each time the menu opens, so that a
    // file just written appears); a file with a problem is listed too, and says why when chosen.
    void fillLessonsMenu();
    void showView(LessonChart chart);
    void updateActions();
    void updateStatus();
    void updateStoreStatus();
    // Whether the runs shown may be replaced by another store's: not while runs started here are
    // active, and only after asking when they are kept in memory only.
    bool readyToReplaceRuns();
    // Asks what to do about a store that did not open; the next file to try, or empty to go on
    // as before.
    QString askAfterStoreError(const QString& path, const QString& problem);
    // Asks for a file to open as a run store; empty when cancelled.
    QString askStoreToOpen();
    // Asks for the name of a new run store, never an existing file; empty when cancelled.
    QString askNewStorePath(const QString& folder);
    // Asks for a new folder for `spec`'s PyTorch export and writes it with `write`, saying how
    // it went (File > Export as PyTorch script..., a run's context menu).
    void exportAsPytorch(const RunSpec& spec,
                         const std::function<bool(const QString&, QString*)>& write);
    // The ids of the runs shown on the charts, in table order.
    std::vector<int> shownRuns() const;

    RunCollection& runs_;
    DeviceInventory devices_;
    ExperimentForm* form_ = nullptr;
    ChartGrid* charts_ = nullptr;
    ScalingView* scaling_ = nullptr;
    StepsToTargetView* steps_to_target_ = nullptr;
    TimeBreakdownView* time_breakdown_ = nullptr;
    RunTableModel* table_model_ = nullptr;
    RunTableView* table_ = nullptr;
    RunFilterBar* filter_bar_ = nullptr;
    QWidget* table_panel_ = nullptr;  // the filter bar and the table
    LogPane* log_ = nullptr;
    QTabWidget* views_ = nullptr;
    QDockWidget* form_dock_ = nullptr;
    QDockWidget* log_dock_ = nullptr;
    LessonPanel* lesson_panel_ = nullptr;
    std::vector<int> hidden_for_lesson_;  // the runs runLesson() hid, for closeLesson()
    QDockWidget* lesson_dock_ = nullptr;
    QMenu* lessons_menu_ = nullptr;
    QLabel* status_label_ = nullptr;
    QLabel* store_label_ = nullptr;

    QAction* start_action_ = nullptr;
    QAction* sweep_action_ = nullptr;
    QAction* stop_action_ = nullptr;
    QAction* stop_all_action_ = nullptr;
    QAction* export_action_ = nullptr;
    QAction* open_config_action_ = nullptr;
    QAction* save_config_action_ = nullptr;
    QAction* cluster_job_action_ = nullptr;
    QAction* pytorch_export_action_ = nullptr;
    QAction* open_store_action_ = nullptr;
    QAction* new_store_action_ = nullptr;
    QAction* import_runs_action_ = nullptr;
    QAction* export_runs_action_ = nullptr;
    QAction* export_metrics_action_ = nullptr;
    QAction* presenter_action_ = nullptr;
    QAction* dark_action_ = nullptr;

    bool presenter_ = false;
    Theme theme_ = Theme::Light;
    QByteArray geometry_before_presenter_;
    QByteArray state_before_presenter_;
};

}  // namespace scalelab
