#include "time_breakdown_view.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

#include "chrome_trace.h"
#include "empty_state_label.h"
#include "run_collection.h"
#include "scaled_font.h"
#include "stacked_bars_widget.h"
#include "theme.h"

namespace scalelab {

namespace {

constexpr int max_last_steps = 1'000'000;

// The hints sit in a tinted box with a coloured edge: amber when something stands out, green when
// nothing does. Translucent tints read on the light and the dark palette alike.
QString hint_style(Theme theme) {
    return QStringLiteral(R"(
QLabel#hint { border-left: 3px solid #e69f00; background: rgba(230, 159, 0, 0.12);
              padding: 6px 10px; }
QLabel#hint[calm="true"] { border-left-color: #009e73; background: rgba(0, 158, 115, 0.10); }
QLabel#windowProblem { color: %1; }
)")
        .arg(problem_colour(theme).name());
}

QString capitalised(QString text) {
    if (!text.isEmpty())
        text[0] = text[0].toUpper();
    return text;
}

QString device_name(std::size_t device) {
    return TimeBreakdownView::tr("device %1").arg(device);
}

// "device 0", "devices 0 and 1", "devices 0, 1 and 3".
QString device_list(const std::vector<std::size_t>& devices) {
    if (devices.size() == 1)
        return device_name(devices.front());
    QStringList numbers;
    for (std::size_t device : devices)
        numbers.append(QString::number(device));
    const QString last = numbers.takeLast();
    return TimeBreakdownView::tr("devices %1 and %2").arg(numbers.join(QStringLiteral(", ")), last);
}

QString whole_percent_text(double share) {
    return QStringLiteral("%1%").arg(share * 100.0, 0, 'f', 0);
}

// "41%", or "38–41%" when the shares differ once rounded.
QString percent_range(double low, double high) {
    const QString lowest = whole_percent_text(low);
    const QString highest = whole_percent_text(high);
    return lowest == highest ? highest : QStringLiteral("%1–%2").arg(lowest.chopped(1), highest);
}

// A file name made of `name`: characters that some file systems refuse become '-'.
QString file_safe(const QString& name) {
    QString safe = name.trimmed();
    for (QChar& c : safe)
        if (QStringLiteral("/\\:*?\"<>|").contains(c) || c.category() == QChar::Other_Control)
            c = QLatin1Char('-');
    return safe.isEmpty() ? QStringLiteral("run") : safe;
}

}  // namespace

TimeBreakdownView::TimeBreakdownView(RunCollection& runs, QWidget* parent)
    : QWidget(parent), runs_(runs) {
    setStyleSheet(hint_style(current_theme()));
    empty_state_ =
        make_empty_state_label(tr("Time breakdown is measured for runs trained in this window. "
                                  "Start a run (with 2 or more devices to see communication)."));
    buildControls();
    buildBody();
    buildPages();
    connectControls();
    followRuns();
    setFontScale(1.0);
    redrawNow();
}

void TimeBreakdownView::buildControls() {
    run_box_ = new QComboBox;
    run_box_->setObjectName(QStringLiteral("run"));
    run_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    run_box_->setMinimumContentsLength(16);

    last_button_ = new QRadioButton(tr("the last"));
    last_button_->setChecked(true);
    last_steps_ = new QSpinBox;
    last_steps_->setObjectName(QStringLiteral("lastSteps"));
    last_steps_->setRange(1, max_last_steps);
    last_steps_->setValue(default_last_steps);
    last_steps_->setSuffix(tr(" steps"));
    range_button_ = new QRadioButton(tr("steps"));
    from_step_ = new QSpinBox;
    from_step_->setObjectName(QStringLiteral("fromStep"));
    to_step_ = new QSpinBox;
    to_step_->setObjectName(QStringLiteral("toStep"));
    for (QSpinBox* field : {from_step_, to_step_})
        field->setRange(1, std::numeric_limits<int>::max());
    // A number counts once typed in full, not at each digit.
    for (QSpinBox* field : {last_steps_, from_step_, to_step_})
        field->setKeyboardTracking(false);

    window_problem_ = new QLabel;
    window_problem_->setObjectName(QStringLiteral("windowProblem"));
    window_problem_->setWordWrap(true);
    window_problem_->hide();

    export_button_ = new QPushButton(tr("Export Chrome trace..."));
    export_button_->setObjectName(QStringLiteral("exportTrace"));
    export_button_->setToolTip(
        tr("Saves the steps shown as a trace for chrome://tracing or "
           "ui.perfetto.dev: one track per device, each bucket's "
           "all-reduce a span."));
}

void TimeBreakdownView::buildBody() {
    notice_ = new QLabel;
    notice_->setObjectName(QStringLiteral("notice"));
    notice_->setAlignment(Qt::AlignCenter);
    notice_->setWordWrap(true);
    notice_->setMargin(24);
    notice_->setForegroundRole(QPalette::PlaceholderText);

    caption_ = new QLabel;
    caption_->setObjectName(QStringLiteral("caption"));
    bars_ = new StackedBarsWidget;
    bars_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    QList<StackedBarsWidget::Part> parts;
    for (StepPhase phase : all_step_phases)
        parts.append({capitalised(QString::fromUtf8(step_phase_name(phase))), phaseColour(phase)});
    bars_->setParts(parts);
    bars_->setValueUnit(tr("ms"));
    bars_->setValueAxisTitle(tr("Mean time per step (ms)"));
    hint_ = new QLabel;
    hint_->setObjectName(QStringLiteral("hint"));
    hint_->setWordWrap(true);
    hint_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    // The bars take the height they need; what is left stays below the hints.
    chart_page_ = new QWidget;
    auto* chart_layout = new QVBoxLayout(chart_page_);
    chart_layout->setContentsMargins(0, 0, 0, 0);
    chart_layout->addWidget(caption_);
    chart_layout->addWidget(bars_);
    chart_layout->addWidget(hint_);
    chart_layout->addStretch(1);

    body_ = new QStackedWidget;
    body_->addWidget(notice_);
    body_->addWidget(chart_page_);
}

void TimeBreakdownView::buildPages() {
    auto* run_row = new QHBoxLayout;
    run_row->addWidget(new QLabel(tr("Run:")));
    run_row->addWidget(run_box_);
    run_row->addStretch();
    run_row->addWidget(export_button_);
    auto* window_row = new QHBoxLayout;
    window_row->addWidget(new QLabel(tr("Average over:")));
    window_row->addWidget(last_button_);
    window_row->addWidget(last_steps_);
    window_row->addSpacing(8);
    window_row->addWidget(range_button_);
    window_row->addWidget(from_step_);
    window_row->addWidget(new QLabel(tr("to")));
    window_row->addWidget(to_step_);
    window_row->addStretch();

    content_ = new QWidget;
    auto* content_layout = new QVBoxLayout(content_);
    content_layout->setContentsMargins(8, 8, 8, 8);
    content_layout->addLayout(run_row);
    content_layout->addLayout(window_row);
    content_layout->addWidget(window_problem_);
    content_layout->addWidget(body_, 1);

    pages_ = new QStackedWidget;
    pages_->addWidget(empty_state_);
    pages_->addWidget(content_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_);
}

void TimeBreakdownView::connectControls() {
    connect(run_box_, &QComboBox::activated, this,
            [this](int index) { setRun(run_box_->itemData(index).toInt()); });
    // Editing a window's fields chooses that window.
    for (QSpinBox* field : {from_step_, to_step_})
        connect(field, &QSpinBox::valueChanged, this, [this] { useWindow(Window::Range); });
    connect(last_steps_, &QSpinBox::valueChanged, this, [this] { useWindow(Window::LastSteps); });
    connect(last_button_, &QRadioButton::toggled, this, [this](bool on) {
        if (on)
            useWindow(Window::LastSteps);
    });
    connect(range_button_, &QRadioButton::toggled, this, [this](bool on) {
        if (on)
            useWindow(Window::Range);
    });
    connect(export_button_, &QPushButton::clicked, this,
            &TimeBreakdownView::exportTraceInteractively);
}

void TimeBreakdownView::followRuns() {
    redraw_timer_.setSingleShot(true);
    redraw_timer_.setInterval(redraw_interval_ms);
    connect(&redraw_timer_, &QTimer::timeout, this, &TimeBreakdownView::redrawNow);
    for (const auto signal : {&RunCollection::runAdded, &RunCollection::runChanged,
                              &RunCollection::curvesChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, &TimeBreakdownView::scheduleRedraw);
}

TimeBreakdownView::~TimeBreakdownView() = default;

QColor TimeBreakdownView::phaseColour(StepPhase phase) {
    // Compute in blues and green, overheads in warm colours, waiting in idle grey.
    switch (phase) {
        case StepPhase::Data:
            return QColor(0xe6, 0x9f, 0x00);  // orange
        case StepPhase::Forward:
            return QColor(0x56, 0xb4, 0xe9);  // sky blue
        case StepPhase::Backward:
            return QColor(0x00, 0x72, 0xb2);  // blue
        case StepPhase::ExposedComm:
            return QColor(0xd5, 0x5e, 0x00);  // vermillion
        case StepPhase::Wait:
            return QColor(0x99, 0x99, 0x99);  // grey
        case StepPhase::Optimizer:
            return QColor(0x00, 0x9e, 0x73);  // bluish green
    }
    return {};
}

QStringList TimeBreakdownView::hints(const TimeBreakdown& breakdown) {
    QStringList found;
    if (breakdown.steps == 0 || breakdown.step_seconds <= 0 || breakdown.devices.empty())
        return found;
    const std::size_t devices = breakdown.devices.size();
    const auto share = [&](std::size_t device, StepPhase phase) {
        return breakdown.devices[device][std::size_t(phase)] / breakdown.step_seconds;
    };
    const auto notable = [&](StepPhase phase) {
        std::vector<std::size_t> listed;
        for (std::size_t device = 0; device < devices; ++device)
            if (share(device, phase) >= notable_share)
                listed.push_back(device);
        return listed;
    };
    // The device with the largest (or smallest) share of `phase`.
    const auto extreme = [&](StepPhase phase, bool largest) {
        std::size_t chosen = 0;
        for (std::size_t device = 1; device < devices; ++device)
            if (largest ? share(device, phase) > share(chosen, phase)
                        : share(device, phase) < share(chosen, phase))
                chosen = device;
        return chosen;
    };

    const std::vector<std::size_t> waiting = notable(StepPhase::Wait);
    if (!waiting.empty()) {
        double low = 1;
        for (std::size_t device : waiting)
            low = std::min(low, share(device, StepPhase::Wait));
        const double high = share(extreme(StepPhase::Wait, true), StepPhase::Wait);
        QString line =
            tr("%1 %2 %3 of the step for the other devices")
                .arg(capitalised(device_list(waiting)),
                     waiting.size() == 1 ? tr("waits") : tr("wait"), percent_range(low, high));
        // Wait is time blocked on the others: the device that waits least is the one they wait
        // for.
        if (waiting.size() < devices) {
            const std::size_t least = extreme(StepPhase::Wait, false);
            line += tr(": %1 waits least (%2), so it is the straggler the others wait for.")
                        .arg(device_name(least), whole_percent_text(share(least, StepPhase::Wait)));
        } else {
            line +=
                tr(": every device waits, so the time goes to synchronisation, not to one "
                   "slow device.");
        }
        found.append(line);
    }
    if (!notable(StepPhase::ExposedComm).empty()) {
        const std::size_t worst = extreme(StepPhase::ExposedComm, true);
        found.append(
            tr("Exposed communication takes up to %1 of the step (%2): backward does not "
               "hide the gradient all-reduce, so the run is communication-bound.")
                .arg(whole_percent_text(share(worst, StepPhase::ExposedComm)), device_name(worst)));
    }
    if (!notable(StepPhase::Data).empty()) {
        const std::size_t worst = extreme(StepPhase::Data, true);
        found.append(
            tr("Loading data takes up to %1 of the step (%2): the devices wait for their "
               "input.")
                .arg(whole_percent_text(share(worst, StepPhase::Data)), device_name(worst)));
    }
    return found;
}

int TimeBreakdownView::runId() const {
    return chosen_ != 0 && runs_.find(chosen_) != nullptr ? chosen_ : latestTimedRun();
}

int TimeBreakdownView::latestTimedRun() const {
    int latest = 0;
    for (auto id = runs_.ids().rbegin(); id != runs_.ids().rend(); ++id) {
        const RunRecord* run = runs_.find(*id);
        if (run->timings.empty())
            continue;
        if (is_active(run->state))
            return *id;
        if (latest == 0)
            latest = *id;
    }
    return latest;
}

std::vector<int> TimeBreakdownView::offeredRuns() const {
    std::vector<int> offered;
    for (int id : runs_.ids())
        if (id == chosen_ || !runs_.find(id)->timings.empty())
            offered.push_back(id);
    return offered;
}

void TimeBreakdownView::fillRunBox(const std::vector<int>& offered) {
    const QSignalBlocker blocker(run_box_);
    while (run_box_->count() > int(offered.size()))
        run_box_->removeItem(run_box_->count() - 1);
    for (std::size_t index = 0; index < offered.size(); ++index) {
        const RunRecord* run = runs_.find(offered[index]);
        const QString text =
            run->timings.empty() ? tr("%1 (no timings)").arg(run->name) : run->name;
        if (int(index) == run_box_->count())
            run_box_->addItem(text, run->id);
        run_box_->setItemText(int(index), text);
        run_box_->setItemData(int(index), run->id);
    }
    run_box_->setCurrentIndex(run_box_->findData(runId()));
}

void TimeBreakdownView::scheduleRedraw() {
    if (!redraw_timer_.isActive())
        redraw_timer_.start();
}

void TimeBreakdownView::setRun(int id) {
    chosen_ = id;
    redrawNow();
}

void TimeBreakdownView::setWindow(int first, int last) {
    {
        const QSignalBlocker from_blocker(from_step_);
        const QSignalBlocker to_blocker(to_step_);
        from_step_->setValue(first);
        to_step_->setValue(last);
    }
    useWindow(Window::Range);
}

void TimeBreakdownView::setLastSteps(int steps) {
    {
        const QSignalBlocker blocker(last_steps_);
        last_steps_->setValue(steps);
    }
    useWindow(Window::LastSteps);
}

void TimeBreakdownView::useWindow(Window window) {
    window_ = window;
    QRadioButton* button = window == Window::Range ? range_button_ : last_button_;
    {
        const QSignalBlocker blocker(button);
        button->setChecked(true);
    }
    redrawNow();
}

void TimeBreakdownView::redrawNow() {
    redraw_timer_.stop();
    fillRunBox(offeredRuns());
    breakdown_ = {};
    window_problem_->hide();
    const RunRecord* run = runs_.find(runId());
    if (run == nullptr) {
        pages_->setCurrentWidget(empty_state_);
        return;
    }
    pages_->setCurrentWidget(content_);

    const bool timed = !run->timings.empty();
    for (QWidget* field : std::initializer_list<QWidget*>{last_button_, last_steps_, range_button_,
                                                          from_step_, to_step_})
        field->setEnabled(timed);
    if (!timed) {
        showNotice(is_active(run->state)
                       ? tr("\u201c%1\u201d has not finished a step yet.").arg(run->name)
                       : tr("\u201c%1\u201d has no time breakdown. Times are measured while a run "
                            "trains in this window; the run store keeps curves, not times, so "
                            "stored runs have none.")
                             .arg(run->name));
        return;
    }

    std::int64_t first = 0;
    std::int64_t last = 0;
    if (window_ == Window::LastSteps) {
        last = run->timings.back().step;
        first = std::max(run->timings.front().step, last - last_steps_->value() + 1);
    } else {
        first = from_step_->value();
        last = to_step_->value();
        if (first > last) {
            window_problem_->setText(
                tr("Step %1 comes after step %2: make \u201cfrom\u201d at most \u201cto\u201d.")
                    .arg(first)
                    .arg(last));
            window_problem_->show();
            showNotice(tr("Nothing is shown until the window is fixed."));
            return;
        }
    }
    breakdown_ = mean_time_breakdown(run->timings, first, last);
    if (breakdown_.steps == 0) {
        showNotice(tr("No timed steps from %1 to %2: \u201c%3\u201d has timings for steps "
                      "%4\u2013%5.")
                       .arg(first)
                       .arg(last)
                       .arg(run->name)
                       .arg(run->timings.front().step)
                       .arg(run->timings.back().step));
        return;
    }
    showBreakdown();
}

void TimeBreakdownView::showNotice(const QString& text) {
    notice_->setText(text);
    body_->setCurrentWidget(notice_);
    export_button_->setEnabled(false);
}

void TimeBreakdownView::showBreakdown() {
    QStringList labels;
    std::vector<std::vector<double>> milliseconds;
    for (std::size_t device = 0; device < breakdown_.devices.size(); ++device) {
        labels.append(device_name(device));
        std::vector<double>& row = milliseconds.emplace_back();
        for (double seconds : breakdown_.devices[device])
            row.push_back(seconds * 1000.0);
    }
    bars_->setBars(labels, milliseconds);
    const double step_ms = breakdown_.step_seconds * 1000.0;
    bars_->setReference(step_ms, tr("mean step"));
    const QString count =
        breakdown_.steps == 1 ? tr("1 step") : tr("%1 steps").arg(breakdown_.steps);
    caption_->setText(tr("Steps %1\u2013%2 (%3), mean step %4")
                          .arg(breakdown_.first_step)
                          .arg(breakdown_.last_step)
                          .arg(count, bars_->formatValue(step_ms)));

    // While the last steps are shown, the range fields hold them: choosing a range starts there.
    if (window_ == Window::LastSteps) {
        const QSignalBlocker from_blocker(from_step_);
        const QSignalBlocker to_blocker(to_step_);
        from_step_->setValue(int(breakdown_.first_step));
        to_step_->setValue(int(breakdown_.last_step));
    }

    const QStringList found = hints(breakdown_);
    QStringList lines;
    for (const QString& line : found)
        lines.append(QStringLiteral("\u2022 ") + line);
    hint_->setText(found.isEmpty() ? tr("No device spends %1 of the step or more waiting, on "
                                        "exposed communication or loading data.")
                                         .arg(whole_percent_text(notable_share))
                                   : lines.join(QLatin1Char('\n')));
    hint_->setProperty("calm", found.isEmpty());
    hint_->style()->unpolish(hint_);
    hint_->style()->polish(hint_);
    body_->setCurrentWidget(chart_page_);
    export_button_->setEnabled(true);
}

QString TimeBreakdownView::defaultTraceName() const {
    const RunRecord* run = runs_.find(runId());
    return QStringLiteral("%1-steps-%2-%3.trace.json")
        .arg(file_safe(run != nullptr ? run->name : QString()))
        .arg(breakdown_.first_step)
        .arg(breakdown_.last_step);
}

bool TimeBreakdownView::exportTrace(const QString& path, QString* error) {
    const RunRecord* run = runs_.find(runId());
    if (run == nullptr || breakdown_.steps == 0) {
        if (error != nullptr)
            *error = tr("Nothing to export: choose a run and a window with timed steps.");
        return false;
    }
    return write_chrome_trace(path, *run, breakdown_.first_step, breakdown_.last_step, error);
}

void TimeBreakdownView::exportTraceInteractively() {
    const QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Chrome trace"),
                                                      QDir(folder).filePath(defaultTraceName()),
                                                      tr("Chrome trace (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportTrace(path, &error))
        QMessageBox::warning(this, tr("Cannot export the trace"), error);
}

void TimeBreakdownView::setDarkTheme(bool dark) {
    setStyleSheet(hint_style(dark ? Theme::Dark : Theme::Light));
    bars_->setDarkTheme(dark);
}

void TimeBreakdownView::setFontScale(qreal scale) {
    const QFont base = font();
    caption_->setFont(scaled_font(base, 1.15 * scale, true));
    hint_->setFont(scaled_font(base, scale));
    notice_->setFont(scaled_font(base, scale));
    empty_state_->setFont(scaled_font(base, scale));
    bars_->setFontScale(scale);
}

}  // namespace scalelab
