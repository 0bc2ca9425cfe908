#include "lesson_panel.h"

#include <algorithm>

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "run_collection.h"
#include "run_group.h"
#include "run_palette.h"
#include "scaled_font.h"
#include "theme.h"

namespace scalelab {

namespace {

// The views a lesson may name that are tabs of their own rather than charts of the grid.
QString view_button_text(LessonChart chart) {
    switch (chart) {
        case LessonChart::Scaling:
            return QObject::tr("Show the scaling view");
        case LessonChart::StepsToTarget:
            return QObject::tr("Show steps to target");
        case LessonChart::TimeBreakdown:
            return QObject::tr("Show the time breakdown");
        default:
            return {};
    }
}

}  // namespace

LessonPanel::LessonPanel(RunCollection& runs, QWidget* parent) : QWidget(parent), runs_(runs) {
    title_ = new QLabel;
    title_->setObjectName(QStringLiteral("lessonTitle"));
    title_->setFont(scaled_font(title_->font(), 1.3, true));
    title_->setWordWrap(true);

    explanation_ = new QLabel;
    explanation_->setObjectName(QStringLiteral("lessonExplanation"));
    explanation_->setWordWrap(true);
    explanation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    explanation_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    setting_ = new QLabel;
    setting_->setObjectName(QStringLiteral("lessonSetting"));
    setting_->setWordWrap(true);
    setting_->setForegroundRole(QPalette::PlaceholderText);

    assessment_ = new QLabel;
    assessment_->setObjectName(QStringLiteral("lessonAssessment"));
    assessment_->setWordWrap(true);

    claims_ = new QLabel;
    claims_->setObjectName(QStringLiteral("lessonClaims"));
    claims_->setWordWrap(true);
    claims_->setTextFormat(Qt::RichText);
    claims_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    claims_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    run_button_ = new QPushButton(tr("Run lesson"));
    run_button_->setObjectName(QStringLiteral("runLessonButton"));
    run_button_->setToolTip(tr("Queue the lesson's runs; other runs are hidden from the charts"));
    connect(run_button_, &QPushButton::clicked, this, &LessonPanel::runLessonRequested);

    view_buttons_ = new QWidget;
    new QVBoxLayout(view_buttons_);
    view_buttons_->layout()->setContentsMargins(0, 0, 0, 0);

    run_list_ = new QTreeWidget;
    run_list_->setObjectName(QStringLiteral("lessonRuns"));
    run_list_->setColumnCount(3);
    run_list_->setHeaderLabels({tr("Run"), tr("State"), tr("Result")});
    run_list_->setRootIsDecorated(false);
    run_list_->setSelectionMode(QAbstractItemView::NoSelection);
    run_list_->setWordWrap(true);
    // The names and the results share the panel's width (wrapped, full text in the tooltip), so
    // that a long run name never pushes the results out of a narrow panel.
    run_list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    run_list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    run_list_->header()->setSectionResizeMode(2, QHeaderView::Stretch);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(title_);
    layout->addWidget(explanation_);
    layout->addWidget(setting_);
    layout->addWidget(assessment_);
    layout->addWidget(run_button_);
    layout->addWidget(view_buttons_);
    layout->addWidget(run_list_, 1);
    // The claims share the height left with the run list, and scroll on a small screen.
    claims_area_ = new QScrollArea;
    claims_area_->setWidget(claims_);
    claims_area_->setWidgetResizable(true);
    claims_area_->setFrameShape(QFrame::NoFrame);
    claims_area_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(claims_area_, 1);

    refresh_timer_.setSingleShot(true);
    refresh_timer_.setInterval(refresh_interval_ms);
    connect(&refresh_timer_, &QTimer::timeout, this, &LessonPanel::refreshNow);
    for (const auto signal :
         {&RunCollection::runChanged, &RunCollection::curvesChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, [this](int id) {
            if (follows(id))
                scheduleRefresh();
        });
    title_->setText(tr("No lesson open"));
    explanation_->setText(tr("Open one from the Lessons menu."));
    setting_->hide();
    assessment_->hide();
    claims_area_->hide();
    run_button_->setEnabled(false);
}

void LessonPanel::setLesson(const Lesson& lesson) {
    lesson_ = lesson;
    run_ids_.clear();
    title_->setText(lesson.title);
    explanation_->setText(lesson.explanation);
    setting_->setText(lesson.setting_note);
    setting_->setVisible(!lesson.setting_note.isEmpty());
    if (lesson.assessment)
        assessment_->setText(tr("Pass: validation accuracy of at least %1 in %n consecutive "
                                "epoch(s), within %2 s of training.",
                                nullptr, lesson.assessment->consecutive_epochs)
                                 .arg(lesson.assessment->target)
                                 .arg(lesson.assessment->time_budget_s));
    assessment_->setVisible(lesson.assessment.has_value());
    int runs = 0;
    for (const LessonRun& run : lesson.runs)
        runs += run.repeats;
    run_button_->setText(tr("Run lesson (%n run(s))", nullptr, runs));
    run_button_->setEnabled(!lesson.runs.empty());

    while (QLayoutItem* item = view_buttons_->layout()->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    for (const LessonChart chart : lesson.charts) {
        const QString text = view_button_text(chart);
        if (text.isEmpty())
            continue;
        auto* button = new QPushButton(text);
        button->setFlat(true);
        button->setStyleSheet(QStringLiteral("text-align: left"));
        connect(button, &QPushButton::clicked, this, [this, chart] { emit viewRequested(chart); });
        view_buttons_->layout()->addWidget(button);
    }

    run_list_->clear();
    // The seeds go with the state, whose column fits its text, so that the run's name keeps the
    // room it had: "batch 16" | "not started, 3 seeds", then "3 runs: 3 finished".
    for (const LessonRun& run : lesson.runs)
        run_list_->addTopLevelItem(new QTreeWidgetItem(
            {run.name,
             run.repeats > 1 ? tr("not started, %1 seeds").arg(run.repeats) : tr("not started"),
             QString()}));
    showClaims();
}

std::vector<ClaimVerdict> LessonPanel::claimVerdicts() const {
    std::vector<ClaimVerdict> verdicts;
    if (lesson_)
        for (const LessonClaim& claim : lesson_->claims)
            verdicts.push_back(run_ids_.empty()
                                   ? ClaimVerdict{ClaimOutcome::Pending, tr("not run yet")}
                                   : evaluate_claim(claim, runs_, run_ids_));
    return verdicts;
}

void LessonPanel::showClaims() {
    const std::vector<ClaimVerdict> verdicts = claimVerdicts();
    QString html = tr("<b>What this lesson claims</b>");
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
        const ClaimVerdict& verdict = verdicts[i];
        const QString mark = verdict.outcome == ClaimOutcome::Held
                                 ? tr("<b style='color:#1b7f3b'>✓ held</b>")
                             : verdict.outcome == ClaimOutcome::Failed
                                 ? tr("<b style='color:#c62828'>✗ did not hold</b>")
                             : verdict.outcome == ClaimOutcome::WithinNoise
                                 ? tr("<b style='color:#b26a00'>~ not shown (seed noise)</b>")
                                 : tr("<b>…</b>");
        html +=
            QStringLiteral("<p style='margin:4px 0'>%1 %2<br><small>%3</small></p>")
                .arg(mark, lesson_->claims[i].text.toHtmlEscaped(), verdict.text.toHtmlEscaped());
    }
    claims_->setText(html);
    claims_area_->setVisible(!verdicts.empty());
}

void LessonPanel::setRunIds(LessonRunIds ids) {
    run_ids_ = std::move(ids);
    refreshNow();
}

AssessmentVerdict LessonPanel::verdict(int runId) const {
    const RunRecord* run = runs_.find(runId);
    if (!lesson_ || !lesson_->assessment || run == nullptr)
        return {};
    return assess(*lesson_->assessment, *run);
}

QString LessonPanel::stateText(int row) const {
    const QTreeWidgetItem* item = run_list_->topLevelItem(row);
    return item != nullptr ? item->text(1) : QString();
}

QString LessonPanel::resultText(int row) const {
    const QTreeWidgetItem* item = run_list_->topLevelItem(row);
    return item != nullptr ? item->text(2) : QString();
}

void LessonPanel::scheduleRefresh() {
    if (!refresh_timer_.isActive())
        refresh_timer_.start();
}

bool LessonPanel::follows(int runId) const {
    return std::any_of(run_ids_.begin(), run_ids_.end(), [runId](const std::vector<int>& members) {
        return std::find(members.begin(), members.end(), runId) != members.end();
    });
}

QString LessonPanel::resultFor(int runId) const {
    const RunRecord* run = runs_.find(runId);
    if (run == nullptr)
        return tr("removed");
    if (lesson_ && lesson_->assessment)
        return verdict(runId).text;
    QStringList parts;
    if (const auto accuracy = run->best_val_accuracy())
        parts << tr("best accuracy %1").arg(*accuracy, 0, 'f', 3);
    if (const auto rate = run->mean_images_per_s())
        parts << tr("%1 images/s").arg(*rate, 0, 'f', 0);
    if (run->state == RunState::Diverged || run->state == RunState::Failed)
        parts << run->message;
    return parts.join(QStringLiteral(", "));
}

void LessonPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange)
        scheduleRefresh();
    QWidget::changeEvent(event);
}

std::pair<int, int> LessonPanel::assessed(const std::vector<int>& members) const {
    int passed = 0, failed = 0;
    for (const int id : members) {
        const AssessmentOutcome outcome = verdict(id).outcome;
        passed += outcome == AssessmentOutcome::Passed;
        failed += outcome == AssessmentOutcome::Failed;
    }
    return {passed, failed};
}

QString LessonPanel::groupStateFor(const std::vector<int>& members) const {
    std::vector<const RunRecord*> records;
    for (const int id : members)
        if (const RunRecord* run = runs_.find(id))
            records.push_back(run);
    if (records.empty())
        return tr("removed");
    return group_ended_text(group_summary(records.front()->group, records));
}

QString LessonPanel::groupResultFor(const std::vector<int>& members) const {
    if (lesson_ && lesson_->assessment) {
        const auto [passed, failed] = assessed(members);
        return tr("%1 of %n passed, %2 failed", nullptr, int(members.size()))
            .arg(passed)
            .arg(failed);
    }
    std::vector<const RunRecord*> records;
    for (const int id : members)
        if (const RunRecord* run = runs_.find(id))
            records.push_back(run);
    const GroupSummary summary =
        group_summary(records.empty() ? QString() : records.front()->group, records);
    QStringList parts;
    // The mean and standard deviation over the members that have a result so far.
    if (const auto& accuracy = summary.best_val_accuracy)
        parts << tr("best accuracy %1 ± %2 (%n run(s))", nullptr, accuracy->count)
                     .arg(accuracy->mean, 0, 'f', 3)
                     .arg(accuracy->stddev, 0, 'f', 3);
    if (const auto& rate = summary.images_per_s)
        parts << tr("%1 images/s").arg(rate->mean, 0, 'f', 0);
    if (summary.diverged > 0)
        parts << tr("%n diverged", nullptr, summary.diverged);
    return parts.join(QStringLiteral(", "));
}

void LessonPanel::refreshRow(QTreeWidgetItem* item, const std::vector<int>& members) {
    const bool group = members.size() > 1;
    const RunRecord* first = members.empty() ? nullptr : runs_.find(members.front());
    if (!group && first != nullptr)
        item->setText(0, first->name);
    item->setToolTip(0, item->text(0));
    // A swatch of the (first) run's colour beside its name in the text colour, as in the run
    // table: a name in a light run colour would be hard to read.
    item->setData(0, Qt::DecorationRole,
                  first != nullptr ? QVariant(run_colour(first->colour)) : QVariant());
    item->setText(1, group              ? groupStateFor(members)
                     : first != nullptr ? QString::fromUtf8(to_string(first->state))
                                        : tr("removed"));
    const QString result = group ? groupResultFor(members) : resultFor(members.front());
    item->setText(2, result);
    item->setToolTip(2, result);
    if (lesson_ && lesson_->assessment && first != nullptr) {
        const auto [passed, failed] = assessed(members);
        item->setForeground(2, failed > 0 ? QBrush(problem_colour(current_theme()))
                               : passed == int(members.size())
                                   ? QBrush(success_colour(current_theme()))
                                   : QBrush());
    }
}

void LessonPanel::refreshNow() {
    refresh_timer_.stop();
    for (int row = 0; row < run_list_->topLevelItemCount(); ++row)
        if (std::size_t(row) < run_ids_.size() && !run_ids_[std::size_t(row)].empty())
            refreshRow(run_list_->topLevelItem(row), run_ids_[std::size_t(row)]);
    showClaims();
}

}  // namespace scalelab
