#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "chart_export.h"
#include "chart_grid.h"
#include "cluster_job_dialog.h"
#include "experiment_form.h"
#include "export_dialog.h"
#include "lesson_library.h"
#include "lesson_panel.h"
#include "lesson_queue.h"
#include "log_pane.h"
#include "log_relay.h"
#include "metrics_export.h"
#include "pytorch_export.h"
#include "run_collection.h"
#include "run_exchange.h"
#include "run_filter_bar.h"
#include "run_labels.h"
#include "run_store.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "scaled_font.h"
#include "scaling_view.h"
#include "steps_to_target_view.h"
#include "store_error_dialog.h"
#include "time_breakdown_view.h"

namespace scalelab {

namespace {

// Presenter mode: fonts this much larger, for a projector at the back of a classroom.
constexpr double presenter_font_scale = 1.5;

QString documents_folder() {
    return QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
}

QString native(const QString& path) {
    return QDir::toNativeSeparators(path);
}

// `path`, with `suffix` added unless it already ends so.
QString with_suffix(const QString& path, const QString& suffix) {
    return path.endsWith(suffix, Qt::CaseInsensitive) ? path : path + suffix;
}

}  // namespace

MainWindow::MainWindow(RunCollection& runs, const DeviceInventory& devices, QWidget* parent)
    : QMainWindow(parent), runs_(runs), devices_(devices) {
    setWindowTitle(tr("ScaleLab"));
    setObjectName(QStringLiteral("MainWindow"));
    buildExperimentDock();
    buildCentralArea();
    buildLogDock();
    buildLessonDock();
    buildStatusBar();
    createActions();
    createMenus();
    connectRunsAndForm();
    setFirstState();
    updateActions();
    updateStatus();
    updateStoreStatus();
}

void MainWindow::buildExperimentDock() {
    form_ = new ExperimentForm(devices_);
    form_dock_ = new QDockWidget(tr("Experiment"), this);
    form_dock_->setObjectName(QStringLiteral("ExperimentDock"));
    form_dock_->setWidget(form_);
    form_dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, form_dock_);
}

void MainWindow::buildCentralArea() {
    charts_ = new ChartGrid(runs_);
    scaling_ = new ScalingView(runs_);
    views_ = new QTabWidget;
    views_->addTab(charts_, tr("Charts"));
    views_->addTab(scaling_, tr("Scaling"));
    steps_to_target_ = new StepsToTargetView(runs_);
    views_->addTab(steps_to_target_, tr("Steps to target"));
    time_breakdown_ = new TimeBreakdownView(runs_);
    views_->addTab(time_breakdown_, tr("Time breakdown"));

    table_model_ = new RunTableModel(runs_, this);
    table_ = new RunTableView(runs_, *table_model_);
    filter_bar_ = new RunFilterBar(table_->filter());
    // "What differs" speaks through the configuration column, hidden at first.
    connect(filter_bar_, &RunFilterBar::onlyDifferencesToggled, table_, [this](bool on) {
        if (on)
            table_->setColumnHidden(RunTableModel::ConfigurationColumn, false);
    });
    table_panel_ = new QWidget;
    auto* table_layout = new QVBoxLayout(table_panel_);
    table_layout->setContentsMargins(0, 0, 0, 0);
    table_layout->setSpacing(0);
    table_layout->addWidget(filter_bar_);
    table_layout->addWidget(table_);

    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(views_);
    splitter->addWidget(table_panel_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    // The filter bar, the header and about five runs; the charts get the rest.
    splitter->setSizes({600, 240});
    setCentralWidget(splitter);
}

void MainWindow::buildLogDock() {
    log_ = new LogPane;
    log_dock_ = new QDockWidget(tr("Log"), this);
    log_dock_->setObjectName(QStringLiteral("LogDock"));
    log_dock_->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, log_dock_);
    // The engine's and the run controller's spdlog lines, from whichever thread logs them.
    auto* relay = new LogRelay(this);
    connect(relay, &LogRelay::lineLogged, log_, &LogPane::appendLine);
}

void MainWindow::buildLessonDock() {
    lesson_panel_ = new LessonPanel(runs_);
    lesson_dock_ = new QDockWidget(tr("Lesson"), this);
    lesson_dock_->setObjectName(QStringLiteral("LessonDock"));
    lesson_dock_->setWidget(lesson_panel_);
    addDockWidget(Qt::RightDockWidgetArea, lesson_dock_);
    lesson_dock_->hide();
    connect(lesson_panel_, &LessonPanel::runLessonRequested, this, &MainWindow::runLesson);
    connect(lesson_panel_, &LessonPanel::viewRequested, this, &MainWindow::showView);
}

void MainWindow::buildStatusBar() {
    status_label_ = new QLabel;
    store_label_ = new QLabel;
    store_label_->setObjectName(QStringLiteral("storeStatus"));
    auto* separator = new QFrame;
    separator->setFrameShape(QFrame::VLine);
    separator->setFrameShadow(QFrame::Sunken);
    statusBar()->addPermanentWidget(store_label_);
    statusBar()->addPermanentWidget(separator);
    statusBar()->addPermanentWidget(status_label_);
}

void MainWindow::connectRunsAndForm() {
    connect(form_, &ExperimentForm::startRequested, this, &MainWindow::startRun);
    connect(form_, &ExperimentForm::sweepRequested, this, &MainWindow::queueSweep);
    connect(form_, &ExperimentForm::validityChanged, this, [this] { updateActions(); });
    connect(table_, &RunTableView::stopRequested, this, [this](int id) { runs_.stop(id); });
    connect(table_, &RunTableView::newExperimentFromRun, this, &MainWindow::newExperimentFrom);
    connect(table_, &RunTableView::pytorchExportRequested, this,
            &MainWindow::exportRunAsPytorchScript);
    for (const auto signal :
         {&RunCollection::runAdded, &RunCollection::runChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, [this] {
            updateActions();
            updateStatus();
        });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { updateActions(); });
    connect(&runs_, &RunCollection::storeChanged, this, [this] {
        updateStoreStatus();
        updateActions();
    });
    connect(&runs_, &RunCollection::storeError, this,
            [this](const QString& message) { statusBar()->showMessage(message, 10000); });
}

void MainWindow::setFirstState() {
    form_->setSpec(defaultExperiment(devices_));
    // No screen at all (a display server without an output yet): the size for a large one.
    const QScreen* opened_on = screen();
    const QSize available = opened_on ? opened_on->availableGeometry().size() : QSize(1920, 1080);
    resize(firstSize(available));
    adaptTo(available);
}

bool MainWindow::compactLayoutFor(QSize available) {
    return available.width() < 1280 || available.height() < 900;
}

void MainWindow::adaptTo(QSize available) {
    const bool lesson_shown = lesson_dock_->isVisible();
    if (compactLayoutFor(available)) {
        for (QDockWidget* dock : {lesson_dock_, log_dock_}) {
            addDockWidget(Qt::LeftDockWidgetArea, dock);
            tabifyDockWidget(form_dock_, dock);
        }
        form_dock_->raise();
    } else {
        addDockWidget(Qt::RightDockWidgetArea, lesson_dock_);
        addDockWidget(Qt::BottomDockWidgetArea, log_dock_);
        // The log is for glancing at: a few lines, the charts and the table get the height.
        resizeDocks({log_dock_}, {110}, Qt::Vertical);
        resizeDocks({lesson_dock_}, {340}, Qt::Horizontal);
    }
    lesson_dock_->setVisible(lesson_shown);
    // A compact screen gives the left column what the form's widest row needs, or what the
    // lesson's text and results need to be read (330 px), and the charts the rest.
    const int form_width = form_->minimumSizeHint().width();
    resizeDocks({form_dock_}, {std::max(compactLayoutFor(available) ? 330 : 390, form_width)},
                Qt::Horizontal);
}

void MainWindow::showExperiment() {
    form_dock_->show();
    form_dock_->raise();
}

MainWindow::~MainWindow() = default;

QSize MainWindow::firstSize(QSize available) {
    // A title bar and borders are not part of the size asked for here: 5% of the free area
    // leaves room for them.
    return QSize(1500, 950).boundedTo(available * 0.95);
}

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

    cluster_job_action_ = new QAction(tr("Export &cluster job..."), this);
    cluster_job_action_->setObjectName(QStringLiteral("clusterJobAction"));
    cluster_job_action_->setToolTip(
        tr("Write the experiment and an sbatch script that trains it across the nodes of a "
           "Slurm cluster"));
    connect(cluster_job_action_, &QAction::triggered, this, &MainWindow::exportClusterJob);

    pytorch_export_action_ = new QAction(tr("Export as &PyTorch script..."), this);
    pytorch_export_action_->setObjectName(QStringLiteral("pytorchExportAction"));
    pytorch_export_action_->setToolTip(
        tr("Write the experiment as a PyTorch DistributedDataParallel script that follows "
           "ScaleLab's run step by step (docs/pytorch.md)"));
    connect(pytorch_export_action_, &QAction::triggered, this, &MainWindow::exportPytorchScript);

    open_store_action_ = new QAction(tr("Open run s&tore..."), this);
    open_store_action_->setToolTip(tr("Show the runs of another run store (an SQLite file)"));
    connect(open_store_action_, &QAction::triggered, this, &MainWindow::chooseStoreToOpen);

    new_store_action_ = new QAction(tr("Ne&w run store..."), this);
    connect(new_store_action_, &QAction::triggered, this, &MainWindow::chooseNewStore);

    import_runs_action_ = new QAction(tr("&Import runs..."), this);
    connect(import_runs_action_, &QAction::triggered, this, &MainWindow::chooseRunsToImport);

    export_runs_action_ = new QAction(tr("Export selected &runs..."), this);
    connect(export_runs_action_, &QAction::triggered, this, &MainWindow::exportSelectedRuns);

    export_metrics_action_ = new QAction(tr("Export selected runs' &metrics as CSV..."), this);
    connect(export_metrics_action_, &QAction::triggered, this, &MainWindow::exportSelectedMetrics);

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
    file->addAction(cluster_job_action_);
    file->addAction(pytorch_export_action_);
    file->addSeparator();
    file->addAction(open_store_action_);
    file->addAction(new_store_action_);
    file->addSeparator();
    file->addAction(import_runs_action_);
    file->addAction(export_runs_action_);
    file->addAction(export_metrics_action_);
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

    lessons_menu_ = menuBar()->addMenu(tr("&Lessons"));
    connect(lessons_menu_, &QMenu::aboutToShow, this, &MainWindow::fillLessonsMenu);
    fillLessonsMenu();

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(presenter_action_);
    view->addAction(dark_action_);
    view->addSeparator();
    view->addAction(form_dock_->toggleViewAction());
    view->addAction(log_dock_->toggleViewAction());
    view->addAction(lesson_dock_->toggleViewAction());

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

void MainWindow::fillLessonsMenu() {
    lessons_menu_->clear();
    // Numbered as `scalelab-cli lesson list` and `scalelab --lesson N` number them.
    int number = 0;
    for (const LessonEntry& entry : list_lessons(devices_)) {
        ++number;
        if (entry.lesson) {
            QAction* action = lessons_menu_->addAction(
                QStringLiteral("&%1  %2").arg(number).arg(entry.lesson->title), this,
                [this, lesson = *entry.lesson] { openLesson(lesson); });
            action->setToolTip(native(entry.file));
        } else {
            const QString file = QFileInfo(entry.file).fileName();
            lessons_menu_->addAction(
                tr("&%1  %2 (cannot be opened)").arg(number).arg(file), this,
                [this, error = entry.error, file] {
                    QMessageBox::warning(this, tr("Cannot open the lesson %1").arg(file), error);
                });
        }
    }
    lessons_menu_->addSeparator();
    lessons_menu_->addAction(tr("Open lesson &file..."), this, &MainWindow::chooseLessonFile);
    QAction* close = lessons_menu_->addAction(tr("&Close lesson"), this, &MainWindow::closeLesson);
    close->setEnabled(lesson_panel_->lesson().has_value());
    QAction* folder =
        lessons_menu_->addAction(tr("Your lessons go in %1").arg(native(user_lessons_folder())));
    folder->setEnabled(false);
}

void MainWindow::openLesson(const Lesson& lesson) {
    lesson_panel_->setLesson(lesson);
    lesson_dock_->show();
    lesson_dock_->raise();
    std::vector<ChartKind> grid;
    for (const LessonChart chart : lesson.charts)
        switch (chart) {  // -Wswitch flags a chart left out
            case LessonChart::TrainLoss:
                grid.push_back(ChartKind::TrainLoss);
                break;
            case LessonChart::ValAccuracy:
                grid.push_back(ChartKind::ValAccuracy);
                break;
            case LessonChart::ImagesPerSecond:
                grid.push_back(ChartKind::ImagesPerSecond);
                break;
            case LessonChart::LearningRate:
                grid.push_back(ChartKind::LearningRate);
                break;
            case LessonChart::NoiseScale:
                grid.push_back(ChartKind::NoiseScale);
                break;
            case LessonChart::Scaling:
            case LessonChart::StepsToTarget:
            case LessonChart::TimeBreakdown:
                break;
        }
    charts_->setShownCharts(grid.empty() ? std::vector<ChartKind>(default_shown_charts.begin(),
                                                                  default_shown_charts.end())
                                         : grid);
    switch (lesson.x_axis) {
        case LessonAxis::Step:
            charts_->setXAxis(XAxis::Step);
            break;
        case LessonAxis::Epoch:
            charts_->setXAxis(XAxis::Epoch);
            break;
        case LessonAxis::Samples:
            charts_->setXAxis(XAxis::Samples);
            break;
        case LessonAxis::Time:
            charts_->setXAxis(XAxis::WallTime);
            break;
    }
    if (!grid.empty() || lesson.charts.empty())
        views_->setCurrentWidget(charts_);
    else
        showView(lesson.charts.front());
    statusBar()->showMessage(
        tr("Lesson: %1. Press Run lesson to start its runs.").arg(lesson.title), 6000);
}

bool MainWindow::openLessonFile(const QString& path, QString* error) {
    const LessonEntry entry = load_lesson_file(path, devices_);
    if (!entry.lesson) {
        *error = entry.error;
        return false;
    }
    openLesson(*entry.lesson);
    return true;
}

void MainWindow::chooseLessonFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open lesson"),
                                                      user_lessons_folder(), tr("Lesson (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!openLessonFile(path, &error))
        QMessageBox::warning(this, tr("Cannot open the lesson"), error);
}

void MainWindow::closeLesson() {
    lesson_dock_->hide();
    for (const int id : std::exchange(hidden_for_lesson_, {}))
        if (runs_.find(id) != nullptr)
            runs_.setVisible(id, true);
    charts_->setShownCharts(
        std::vector<ChartKind>(default_shown_charts.begin(), default_shown_charts.end()));
}

std::vector<int> MainWindow::runLesson() {
    const std::optional<Lesson>& lesson = lesson_panel_->lesson();
    if (!lesson)
        return {};
    // The lesson's runs side by side, and nothing else: earlier runs stay in the table, hidden.
    for (const int id : runs_.ids())
        if (runs_.find(id)->visible) {
            runs_.setVisible(id, false);
            hidden_for_lesson_.push_back(id);
        }
    // Each lesson run's repeats one group, which the panel follows as one line.
    const LessonRunIds ids = queue_lesson(runs_, *lesson);
    const std::vector<int> all = all_runs(ids);
    for (const int id : all)
        runs_.setTags(id, {lesson->title});
    lesson_panel_->setRunIds(ids);
    statusBar()->showMessage(
        tr("Queued the lesson's %n run(s); earlier runs are hidden (show them in the table)",
           nullptr, int(all.size())),
        6000);
    return all;
}

void MainWindow::showView(LessonChart chart) {
    switch (chart) {
        case LessonChart::Scaling:
            views_->setCurrentWidget(scaling_);
            return;
        case LessonChart::StepsToTarget:
            views_->setCurrentWidget(steps_to_target_);
            return;
        case LessonChart::TimeBreakdown:
            views_->setCurrentWidget(time_breakdown_);
            return;
        default:
            views_->setCurrentWidget(charts_);
            return;
    }
}

QWidget* MainWindow::currentView() const {
    return views_->currentWidget();
}

void MainWindow::updateActions() {
    start_action_->setEnabled(form_->isValid());
    sweep_action_->setEnabled(form_->sweepValid());
    const std::vector<int> selected = table_->selectedRunIds();
    stop_action_->setEnabled(std::any_of(selected.begin(), selected.end(), [this](int id) {
        const RunRecord* run = runs_.find(id);
        return run != nullptr && is_active(run->state);
    }));
    stop_all_action_->setEnabled(runs_.activeCount() > 0);
    const bool stored = runs_.store() != nullptr;
    const QString needs_store = tr("Open a run store first (File ▸ Open run store)");
    import_runs_action_->setEnabled(stored);
    import_runs_action_->setToolTip(
        stored ? tr("Add the runs of a .scalelab.json file, a run store file or a metrics file "
                    "(train --metrics-out, an exported PyTorch script's)")
               : needs_store);
    export_runs_action_->setEnabled(stored && !selected.empty());
    export_runs_action_->setToolTip(stored ? tr("Write the selected runs to a .scalelab.json file")
                                           : needs_store);
    export_metrics_action_->setEnabled(!selected.empty());
}

void MainWindow::updateStoreStatus() {
    if (const RunStore* store = runs_.store()) {
        const QString path = QDir::toNativeSeparators(store->path());
        store_label_->setText(tr("Run store: %1").arg(QFileInfo(path).fileName()));
        store_label_->setToolTip(path);
    } else {
        store_label_->setText(tr("No run store: runs are kept in memory only"));
        store_label_->setToolTip(
            tr("Runs of this session are lost when the window closes; open or create a run "
               "store in the File menu to keep them"));
    }
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
    const std::vector<int> ids =
        runs_.enqueueRepeats({spec}, {experiment_name(spec)}, form_->repeats());
    if (ids.size() == 1)
        statusBar()->showMessage(tr("Started %1").arg(runs_.find(ids.front())->name), 4000);
    else if (!ids.empty())  // otherwise storeError has said why
        statusBar()->showMessage(
            tr("Queued %n run(s) over seeds %1 and up, as one group", nullptr, int(ids.size()))
                .arg(spec.seed),
            4000);
}

void MainWindow::queueSweep() {
    if (!form_->sweepValid())
        return;
    const std::vector<RunSpec> specs = form_->sweepSpecs();
    std::vector<QString> names;
    for (const RunSpec& spec : specs)
        names.push_back(experiment_name(spec));
    const std::vector<int> ids = runs_.enqueueRepeats(specs, names, form_->repeats());
    statusBar()->showMessage(tr("Queued a sweep of %n run(s)", nullptr, int(ids.size())), 4000);
}

void MainWindow::stopSelectedRun() {
    for (const int id : table_->selectedRunIds())
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

void MainWindow::exportClusterJob() {
    ClusterJobDialog dialog(form_->spec(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save cluster job"), documents_folder() + QStringLiteral("/scalelab-job.sbatch"),
        tr("Slurm batch script (*.sbatch)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!writeClusterJob(dialog.job(), path, &error))
        QMessageBox::warning(this, tr("Cannot save the cluster job"), error);
}

bool MainWindow::writeClusterJob(const ClusterJob& job, const QString& path, QString* error) {
    if (!form_->isValid()) {
        *error =
            tr("Fix the marked fields first: %1").arg(form_->problems().join(QStringLiteral("; ")));
        return false;
    }
    return write_cluster_job(form_->spec(), job, path, error);
}

void MainWindow::exportPytorchScript() {
    exportAsPytorch(form_->spec(), [this](const QString& folder, QString* error) {
        return writePytorchExport(folder, error);
    });
}

void MainWindow::exportRunAsPytorchScript(int runId) {
    if (const RunRecord* run = runs_.find(runId))
        exportAsPytorch(run->spec, [this, runId](const QString& folder, QString* error) {
            return writeRunPytorchExport(runId, folder, error);
        });
}

void MainWindow::exportAsPytorch(const RunSpec& spec,
                                 const std::function<bool(const QString&, QString*)>& write) {
    const QString folder = QFileDialog::getSaveFileName(
        this, tr("Export as PyTorch script: name a new folder"),
        documents_folder() + QStringLiteral("/%1-pytorch").arg(QString::fromStdString(spec.model)),
        QString(), nullptr, QFileDialog::DontConfirmOverwrite);
    if (folder.isEmpty())
        return;
    QString error;
    if (!write(folder, &error)) {
        QMessageBox::warning(this, tr("Cannot export the PyTorch script"), error);
        return;
    }
    statusBar()->showMessage(
        tr("Wrote train_ddp.py, experiment.json, launch.sh, job.sbatch and README.md to %1")
            .arg(native(folder)));
    if (const QStringList warnings = pytorch_export_warnings(spec); !warnings.isEmpty())
        QMessageBox::information(
            this, tr("What the PyTorch script does differently"),
            tr("The script is written. README.md lists what it does otherwise than "
               "ScaleLab:\n\n%1")
                .arg(warnings.join(QStringLiteral("\n\n"))));
}

bool MainWindow::writePytorchExport(const QString& folder, QString* error) {
    if (!form_->isValid()) {
        *error =
            tr("Fix the marked fields first: %1").arg(form_->problems().join(QStringLiteral("; ")));
        return false;
    }
    return write_pytorch_export(form_->spec(), folder, error);
}

bool MainWindow::writeRunPytorchExport(int runId, const QString& folder, QString* error) {
    const RunRecord* run = runs_.find(runId);
    if (run == nullptr) {
        *error = tr("The run is no longer in the table.");
        return false;
    }
    return write_pytorch_export(run->spec, folder, error);
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
        table_panel_->hide();
        menuBar()->hide();
        showFullScreen();
    } else {
        menuBar()->show();
        table_panel_->show();
        restoreState(state_before_presenter_);
        showNormal();
        restoreGeometry(geometry_before_presenter_);
    }
    form_->setAdvancedVisible(!on);
    const double scale = on ? presenter_font_scale : 1.0;
    charts_->setFontScale(scale);
    scaling_->setFontScale(scale);
    steps_to_target_->setFontScale(scale);
    time_breakdown_->setFontScale(scale);
    setFont(scaled_font(QApplication::font(), scale));
}

void MainWindow::setTheme(Theme theme) {
    theme_ = theme;
    dark_action_->setChecked(theme == Theme::Dark);
    if (auto* app = qobject_cast<QApplication*>(QApplication::instance()))
        apply_theme(*app, theme);
    // After apply_theme: the time breakdown's style sheets re-read the new palette.
    const bool dark = theme == Theme::Dark;
    charts_->setDarkTheme(dark);
    scaling_->setDarkTheme(dark);
    steps_to_target_->setDarkTheme(dark);
    time_breakdown_->setDarkTheme(dark);
}

bool MainWindow::readyToReplaceRuns() {
    if (runs_.busy()) {
        QMessageBox::information(
            this, tr("Runs are active"),
            tr("Runs started here are still queued or running, recording into the current run "
               "store. Stop them (Run ▸ Stop all runs) or let them end, then open another "
               "store."));
        return false;
    }
    if (runs_.store() != nullptr || runs_.ids().empty())
        return true;
    QMessageBox box(QMessageBox::Question, tr("Runs kept in memory only"),
                    tr("The %n run(s) of this session are kept in memory only and leave the "
                       "window when a run store opens.",
                       nullptr, int(runs_.ids().size())),
                    QMessageBox::Open | QMessageBox::Cancel, this);
    box.setInformativeText(tr("Export them first (File ▸ Export...) to keep their data."));
    box.setDefaultButton(QMessageBox::Cancel);
    return box.exec() == QMessageBox::Open;
}

bool MainWindow::openStore(const QString& path) {
    if (!readyToReplaceRuns())
        return false;
    QString candidate = path;
    while (!candidate.isEmpty()) {
        QString problem;
        try {
            if (!runs_.setStore(RunStore::open(candidate)))
                return false;
            statusBar()->showMessage(
                tr("%n run(s) in the run store %1", nullptr, int(runs_.ids().size()))
                    .arg(native(candidate)),
                6000);
            return true;
        } catch (const StoreError& error) {
            problem = QString::fromUtf8(error.what());
        }
        candidate = askAfterStoreError(candidate, problem);
    }
    return false;
}

QString MainWindow::askAfterStoreError(const QString& path, const QString& problem) {
    const QString go_on =
        runs_.store() != nullptr ? tr("Keep the Current Store") : tr("Continue Without a Store");
    for (;;) {
        StoreErrorDialog dialog(path, problem, go_on, this);
        dialog.exec();
        QString next;
        switch (dialog.choice()) {
            case StoreErrorDialog::Choice::OpenAnother:
                next = askStoreToOpen();
                break;
            case StoreErrorDialog::Choice::NewStore:
                next = askNewStorePath(QFileInfo(path).absolutePath());
                break;
            case StoreErrorDialog::Choice::GoOn:
                updateStoreStatus();
                return {};
        }
        if (!next.isEmpty())
            return next;  // a cancelled file dialog comes back here
    }
}

QString MainWindow::askStoreToOpen() {
    const QString folder = runs_.store() != nullptr
                               ? QFileInfo(runs_.store()->path()).absolutePath()
                               : QFileInfo(RunStore::default_path()).absolutePath();
    return QFileDialog::getOpenFileName(this, tr("Open run store"), folder,
                                        tr("Run stores (*.sqlite *.db);;All files (*)"));
}

QString MainWindow::askNewStorePath(const QString& folder) {
    QString proposed = QDir(folder).filePath(QStringLiteral("runs.sqlite"));
    for (int n = 2; QFileInfo::exists(proposed); ++n)
        proposed = QDir(folder).filePath(QStringLiteral("runs-%1.sqlite").arg(n));
    for (;;) {
        const QString path = QFileDialog::getSaveFileName(this, tr("New run store"), proposed,
                                                          tr("Run stores (*.sqlite *.db)"), nullptr,
                                                          QFileDialog::DontConfirmOverwrite);
        if (path.isEmpty() || !QFileInfo::exists(path))
            return path;
        QMessageBox::warning(this, tr("The file exists"),
                             tr("%1 already exists. A new run store needs a new file name: "
                                "ScaleLab never overwrites a file. (To use this file as it is, "
                                "choose File ▸ Open run store.)")
                                 .arg(native(path)));
    }
}

void MainWindow::chooseStoreToOpen() {
    const QString path = askStoreToOpen();
    if (!path.isEmpty())
        openStore(path);
}

void MainWindow::chooseNewStore() {
    const QString folder = runs_.store() != nullptr
                               ? QFileInfo(runs_.store()->path()).absolutePath()
                               : documents_folder();
    const QString path = askNewStorePath(folder);
    if (!path.isEmpty())
        openStore(path);
}

bool MainWindow::importRuns(const QString& path, std::vector<int>* imported, QString* error) {
    RunStore* store = runs_.store();
    if (store == nullptr) {
        *error = tr("Open a run store first: imported runs are added to it.");
        return false;
    }
    try {
        const std::vector<std::int64_t> ids = import_any_runs_file(*store, path);
        runs_.refresh();
        imported->assign(ids.begin(), ids.end());
        return true;
    } catch (const ExchangeError& problem) {
        *error = tr("Nothing was imported from %1: %2")
                     .arg(native(path), QString::fromUtf8(problem.what()));
    } catch (const StoreError& problem) {
        *error = tr("Nothing was imported from %1: %2")
                     .arg(native(path), QString::fromUtf8(problem.what()));
    }
    return false;
}

bool MainWindow::exportRuns(const std::vector<int>& ids, const QString& path, QString* error) {
    const RunStore* store = runs_.store();
    if (store == nullptr) {
        *error = tr("Runs are exported from the run store: open or create one first.");
        return false;
    }
    try {
        return save_exchange(*store, std::vector<std::int64_t>(ids.begin(), ids.end()), path,
                             error);
    } catch (const StoreError& problem) {
        *error = tr("Cannot export the runs to %1: %2")
                     .arg(native(path), QString::fromUtf8(problem.what()));
        return false;
    }
}

bool MainWindow::exportMetricsCsv(const std::vector<int>& ids, const QString& path,
                                  QString* error) {
    for (const int id : ids)
        if (!runs_.loadCurves(id)) {
            *error = tr("The curves of run %1 could not be read from the run store.").arg(id);
            return false;
        }
    return save_metrics_csv(runs_, ids, path, error);
}

void MainWindow::chooseRunsToImport() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import runs"), documents_folder(),
        tr("ScaleLab runs (*.scalelab.json);;Metrics files (*.jsonl);;Run stores (*.sqlite);;"
           "All files (*)"));
    if (path.isEmpty())
        return;
    std::vector<int> imported;
    QString error;
    if (!importRuns(path, &imported, &error)) {
        QMessageBox::warning(this, tr("Import failed"), error);
        return;
    }
    table_->selectRuns(imported);
    statusBar()->showMessage(tr("Imported %n run(s); they are selected in the table (tick a "
                                "name to show its curves)",
                                nullptr, int(imported.size())),
                             8000);
}

void MainWindow::exportSelectedRuns() {
    const std::vector<int> ids = table_->selectedRunIds();
    if (ids.empty())
        return;
    const QString suffix = QString::fromUtf8(exchange_suffix);
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export selected runs"), documents_folder() + QStringLiteral("/runs") + suffix,
        tr("ScaleLab runs (*.scalelab.json)"));
    if (path.isEmpty())
        return;
    path = with_suffix(path, suffix);
    QString error;
    if (exportRuns(ids, path, &error))
        statusBar()->showMessage(
            tr("Exported %n run(s) to %1", nullptr, int(ids.size())).arg(native(path)), 6000);
    else
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::exportSelectedMetrics() {
    const std::vector<int> ids = table_->selectedRunIds();
    if (ids.empty())
        return;
    QString path = QFileDialog::getSaveFileName(this, tr("Export selected runs' metrics"),
                                                documents_folder() + QStringLiteral("/metrics.csv"),
                                                tr("CSV (*.csv)"));
    if (path.isEmpty())
        return;
    path = with_suffix(path, QStringLiteral(".csv"));
    QString error;
    if (exportMetricsCsv(ids, path, &error))
        statusBar()->showMessage(
            tr("Exported the metrics of %n run(s) to %1", nullptr, int(ids.size()))
                .arg(native(path)),
            6000);
    else
        QMessageBox::warning(this, tr("Export failed"), error);
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
