#pragma once

#include <QMainWindow>

#include "backend/device_inventory.h"
#include "theme.h"
#include "train/run_spec.h"

class QAction;
class QDockWidget;
class QLabel;
class QSplitter;
class QTabWidget;

namespace scalelab {

class ChartGrid;
class ExperimentForm;
class LogPane;
class RunCollection;
class RunTableModel;
class RunTableView;
class ScalingView;
struct ExportRequest;

// ScaleLab's window: the experiment form on the left, the charts and the scaling view in the
// middle, the run table under them, the log pane at the bottom.
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

    ExperimentForm& form() { return *form_; }
    ChartGrid& charts() { return *charts_; }
    RunTableView& table() { return *table_; }
    RunTableModel& tableModel() { return *table_model_; }
    ScalingView& scaling() { return *scaling_; }
    LogPane& log() { return *log_; }

    // Writes what `request` names; false with a message naming the file and the reason.
    bool exportTo(const ExportRequest& request, QString* error);
    bool presenterMode() const { return presenter_; }
    Theme theme() const { return theme_; }

  public slots:
    void startRun();
    void queueSweep();
    void stopSelectedRun();
    void openExportDialog();
    void openConfig();
    void saveConfig();
    void setPresenterMode(bool on);
    void setTheme(scalelab::Theme theme);
    void newExperimentFrom(int runId);

  protected:
    void closeEvent(QCloseEvent* event) override;

  private:
    void createActions();
    void createMenus();
    void updateActions();
    void updateStatus();
    // The ids of the runs shown on the charts, in table order.
    std::vector<int> shownRuns() const;

    RunCollection& runs_;
    DeviceInventory devices_;
    ExperimentForm* form_ = nullptr;
    ChartGrid* charts_ = nullptr;
    ScalingView* scaling_ = nullptr;
    RunTableModel* table_model_ = nullptr;
    RunTableView* table_ = nullptr;
    LogPane* log_ = nullptr;
    QTabWidget* views_ = nullptr;
    QDockWidget* form_dock_ = nullptr;
    QDockWidget* log_dock_ = nullptr;
    QLabel* status_label_ = nullptr;

    QAction* start_action_ = nullptr;
    QAction* sweep_action_ = nullptr;
    QAction* stop_action_ = nullptr;
    QAction* stop_all_action_ = nullptr;
    QAction* export_action_ = nullptr;
    QAction* open_config_action_ = nullptr;
    QAction* save_config_action_ = nullptr;
    QAction* presenter_action_ = nullptr;
    QAction* dark_action_ = nullptr;

    bool presenter_ = false;
    Theme theme_ = Theme::Light;
    QByteArray geometry_before_presenter_;
    QByteArray state_before_presenter_;
};

}  // namespace scalelab
