#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSaveFile>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "chart_export.h"
#include "chart_grid.h"
#include "experiment_form.h"
#include "export_dialog.h"
#include "log_pane.h"
#include "log_relay.h"
#include "metrics_export.h"
#include "run_collection.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "scaling_view.h"

namespace scalelab {

namespace {

// Presenter mode: fonts this much larger, for a projector at the back of a classroom.
constexpr double presenter_font_scale = 1.5;

// What tells runs of one experiment apart on a chart legend; RunCollection makes repeats unique.
QString run_name(const RunSpec& spec) {
    return QStringLiteral("%1, %2 dev × %3, lr %4")
        .arg(QString::fromStdString(spec.model))
        .arg(spec.devices)
        .arg(spec.batch)
        .arg(spec.lr);
}

QString documents_folder() {
    return QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
}

}  // namespace

MainWindow::MainWindow(RunCollection& runs, const DeviceInventory& devices, QWidget* parent)
    : QMainWindow(parent), runs_(runs), devices_(devices) {
    setWindowTitle(tr("ScaleLab"));
    setObjectName(QStringLiteral("MainWindow"));

    form_ = new ExperimentForm(devices_);
    form_dock_ = new QDockWidget(tr("Experiment"), this);
    form_dock_->setObjectName(QStringLiteral("ExperimentDock"));
    form_dock_->setWidget(form_);
    form_dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, form_dock_);

    charts_ = new ChartGrid(runs_);
    scaling_ = new ScalingView(runs_);
    views_ = new QTabWidget;
    views_->addTab(charts_, tr("Charts"));
    views_->addTab(scaling_, tr("Scaling"));

    table_model_ = new RunTableModel(runs_, this);
    table_ = new RunTableView(runs_, *table_model_);

    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(views_);
    splitter->addWidget(table_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    setCentralWidget(splitter);

    log_ = new LogPane;
    log_dock_ = new QDockWidget(tr("Log"), this);
    log_dock_->setObjectName(QStringLiteral("LogDock"));
    log_dock_->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, log_dock_);
    // The engine's and the run controller's spdlog lines, from whichever thread logs them.
    auto* relay = new LogRelay(this);
    connect(relay, &LogRelay::lineLogged, log_, &LogPane::appendLine);

    status_label_ = new QLabel;
    statusBar()->addPermanentWidget(status_label_);

    createActions();
    createMenus();

    connect(form_, &ExperimentForm::startRequested, this, &MainWindow::startRun);
    connect(form_, &ExperimentForm::sweepRequested, this, &MainWindow::queueSweep);
    connect(form_, &ExperimentForm::validityChanged, this, [this] { updateActions(); });
    connect(table_, &RunTableView::stopRequested, this, [this](int id) { runs_.stop(id); });
    connect(table_, &RunTableView::newExperimentFromRun, this, &MainWindow::newExperimentFrom);
    for (const auto signal :
         {&RunCollection::runAdded, &RunCollection::runChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, [this] {
            updateActions();
            updateStatus();
        });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { updateActions(); });

    form_->setSpec(defaultExperiment(devices_));
    resize(1500, 950);
    // The log is for glancing at: a few lines, the charts and the table get the height.
    resizeDocks({log_dock_}, {110}, Qt::Vertical);
    resizeDocks({form_dock_}, {390}, Qt::Horizontal);
    updateActions();
    updateStatus();
}

MainWindow::~MainWindow() = default;

RunSpec MainWindow::defaultExperiment(const DeviceInventory& devices) {
    RunSpec spec;
    spec.model = "cnn";
    spec.dataset = "fashion-mnist";
    spec.devices = devices.gpus.empty() ? 2 : std::min(2, int(devices.gpus.size()));
    return spec;
}

void MainWindow::createActions() {
    start_action_ = new QAction(tr("&Start"), this);
    start_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    start_action_->setToolTip(tr("Start a run with the experiment's settings (Ctrl+R)"));
    connect(start_action_, &QAction::triggered, this, &MainWindow::startRun);

    sweep_action_ = new QAction(tr("&Queue sweep"), this);
    sweep_action_->setToolTip(tr("Queue one run per device count, batch size and learning rate"));
    connect(sweep_action_, &QAction::triggered, this, &MainWindow::queueSweep);

    stop_action_ = new QAction(tr("S&top selected run"), this);
    stop_action_->setShortcut(QKeySequence(Qt::Key_Escape));
    connect(stop_action_, &QAction::triggered, this, &MainWindow::stopSelectedRun);

    stop_all_action_ = new QAction(tr("Stop &all runs"), this);
    connect(stop_all_action_, &QAction::triggered, this, [this] { runs_.stopAll(); });

    export_action_ = new QAction(tr("&Export..."), this);
    export_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(export_action_, &QAction::triggered, this, &MainWindow::openExportDialog);

    open_config_action_ = new QAction(tr("&Open experiment..."), this);
    open_config_action_->setShortcut(QKeySequence::Open);
    connect(open_config_action_, &QAction::triggered, this, &MainWindow::openConfig);

    save_config_action_ = new QAction(tr("&Save experiment..."), this);
    save_config_action_->setShortcut(QKeySequence::Save);
    connect(save_config_action_, &QAction::triggered, this, &MainWindow::saveConfig);

    presenter_action_ = new QAction(tr("&Presenter mode"), this);
    presenter_action_->setCheckable(true);
    presenter_action_->setShortcut(QKeySequence(Qt::Key_F11));
    connect(presenter_action_, &QAction::toggled, this, &MainWindow::setPresenterMode);

    dark_action_ = new QAction(tr("&Dark theme"), this);
    dark_action_->setCheckable(true);
    connect(dark_action_, &QAction::toggled, this,
            [this](bool dark) { setTheme(dark ? Theme::Dark : Theme::Light); });

    // Shortcuts work in presenter mode too, when the menu bar is hidden.
    addActions({start_action_, stop_action_, export_action_, presenter_action_});
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(open_config_action_);
    file->addAction(save_config_action_);
    file->addSeparator();
    file->addAction(export_action_);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(start_action_);
    run->addAction(sweep_action_);
    run->addSeparator();
    run->addAction(stop_action_);
    run->addAction(stop_all_action_);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(presenter_action_);
    view->addAction(dark_action_);
    view->addSeparator();
    view->addAction(form_dock_->toggleViewAction());
    view->addAction(log_dock_->toggleViewAction());

    QToolBar* toolbar = addToolBar(tr("Run"));
    toolbar->setObjectName(QStringLiteral("RunToolBar"));
    toolbar->setMovable(false);
    toolbar->addAction(start_action_);
    toolbar->addAction(sweep_action_);
    toolbar->addAction(stop_action_);
    toolbar->addSeparator();
    toolbar->addAction(export_action_);
    toolbar->addAction(presenter_action_);
}

void MainWindow::updateActions() {
    start_action_->setEnabled(form_->isValid());
    sweep_action_->setEnabled(form_->sweepValid());
    const RunRecord* selected = runs_.find(table_->selectedRunId());
    stop_action_->setEnabled(selected != nullptr && is_active(selected->state));
    stop_all_action_->setEnabled(runs_.activeCount() > 0);
}

void MainWindow::updateStatus() {
    const QString devices = devices_.gpus.empty()
                                ? tr("CPU devices on %n core(s)", nullptr, devices_.cpu_cores)
                                : tr("%n GPU(s)", nullptr, int(devices_.gpus.size()));
    int running = 0;
    int queued = 0;
    for (int id : runs_.ids()) {
        const RunState state = runs_.find(id)->state;
        running += state == RunState::Running;
        queued += state == RunState::Queued;
    }
    status_label_->setText(tr("%1  ·  %2 running, %3 queued  ·  %4 runs")
                               .arg(devices)
                               .arg(running)
                               .arg(queued)
                               .arg(runs_.ids().size()));
}

void MainWindow::startRun() {
    if (!form_->isValid()) {
        statusBar()->showMessage(
            tr("Fix the marked fields first: %1").arg(form_->problems().join(QStringLiteral("; "))),
            8000);
        return;
    }
    const RunSpec spec = form_->spec();
    const int id = runs_.start(spec, run_name(spec));
    statusBar()->showMessage(tr("Started %1").arg(runs_.find(id)->name), 4000);
}

void MainWindow::queueSweep() {
    if (!form_->sweepValid())
        return;
    const std::vector<RunSpec> specs = form_->sweepSpecs();
    std::vector<QString> names;
    for (const RunSpec& spec : specs)
        names.push_back(run_name(spec));
    runs_.enqueue(specs, names);
    statusBar()->showMessage(tr("Queued a sweep of %n run(s)", nullptr, int(specs.size())), 4000);
}

void MainWindow::stopSelectedRun() {
    const int id = table_->selectedRunId();
    if (id != 0)
        runs_.stop(id);
}

void MainWindow::newExperimentFrom(int runId) {
    if (const RunRecord* run = runs_.find(runId)) {
        form_->setSpec(run->spec);
        form_dock_->show();
        statusBar()->showMessage(tr("The form now holds %1's settings").arg(run->name), 4000);
    }
}

std::vector<int> MainWindow::shownRuns() const {
    std::vector<int> shown;
    for (int id : runs_.ids())
        if (runs_.find(id)->visible)
            shown.push_back(id);
    return shown;
}

bool MainWindow::exportTo(const ExportRequest& request, QString* error) {
    switch (request.content) {
        case ExportRequest::Content::MetricsCsv:
            return save_metrics_csv(runs_, shownRuns(), request.path, error);
        case ExportRequest::Content::RunsJson:
            return save_runs_json(runs_, shownRuns(), request.path, error);
        case ExportRequest::Content::AllCharts:
            charts_->redrawNow();
            return request.format == ExportRequest::ImageFormat::Svg
                       ? export_grid_svg(*charts_, request.path, error)
                       : export_grid_png(*charts_, request.path, request.scale, error);
        case ExportRequest::Content::OneChart: {
            charts_->redrawNow();
            ChartSurface& chart = charts_->chart(ChartKind(request.chart));
            return request.format == ExportRequest::ImageFormat::Svg
                       ? export_chart_svg(chart, request.path, error)
                       : export_chart_png(chart, request.path, request.scale, error);
        }
    }
    return false;
}

void MainWindow::openExportDialog() {
    QStringList titles;
    for (const ChartKind kind : all_chart_kinds)
        titles << ChartGrid::title(kind);
    ExportDialog dialog(titles, documents_folder(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    const ExportRequest request = dialog.request();
    if (exportTo(request, &error))
        statusBar()->showMessage(tr("Exported %1").arg(request.path), 6000);
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::openConfig() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open experiment"), documents_folder(), tr("Experiment (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!form_->loadConfig(path, &error))
        QMessageBox::warning(this, tr("Cannot open the experiment"), error);
}

void MainWindow::saveConfig() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save experiment"), documents_folder() + QStringLiteral("/experiment.json"),
        tr("Experiment (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!form_->saveConfig(path, &error))
        QMessageBox::warning(this, tr("Cannot save the experiment"), error);
}

void MainWindow::setPresenterMode(bool on) {
    if (presenter_ == on)
        return;
    presenter_ = on;
    presenter_action_->setChecked(on);
    if (on) {
        geometry_before_presenter_ = saveGeometry();
        state_before_presenter_ = saveState();
        form_dock_->hide();
        log_dock_->hide();
        table_->hide();
        menuBar()->hide();
        showFullScreen();
    } else {
        menuBar()->show();
        table_->show();
        restoreState(state_before_presenter_);
        showNormal();
        restoreGeometry(geometry_before_presenter_);
    }
    form_->setAdvancedVisible(!on);
    charts_->setFontScale(on ? presenter_font_scale : 1.0);
    QFont font = QApplication::font();
    font.setPointSizeF(QFont().pointSizeF() * (on ? presenter_font_scale : 1.0));
    setFont(font);
}

void MainWindow::setTheme(Theme theme) {
    theme_ = theme;
    dark_action_->setChecked(theme == Theme::Dark);
    if (auto* app = qobject_cast<QApplication*>(QApplication::instance()))
        apply_theme(*app, theme);
    charts_->setDarkTheme(theme == Theme::Dark);
    scaling_->setDarkTheme(theme == Theme::Dark);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    const int active = runs_.activeCount();
    if (active > 0) {
        const auto answer = QMessageBox::question(
            this, tr("Runs are active"),
            tr("%n run(s) are running or queued. Stop them and quit?", nullptr, active),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
        // The running run ends before its next step; the controller joins its thread when it
        // is destroyed after this window.
        runs_.stopAll();
    }
    event->accept();
}

}  // namespace scalelab
