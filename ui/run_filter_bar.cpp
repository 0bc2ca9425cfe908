#include "run_filter_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <functional>

#include "run_palette.h"
#include "run_table_model.h"
#include "theme.h"

namespace scalelab {

RunFilterBar::RunFilterBar(RunFilter& filter, QWidget* parent) : QWidget(parent), filter_(filter) {
    search_ = new QLineEdit;
    search_->setObjectName(QStringLiteral("runSearch"));
    search_->setPlaceholderText(tr("Filter runs by name, tag or configuration"));
    search_->setClearButtonEnabled(true);
    search_->setText(filter_.text());
    connect(search_, &QLineEdit::textChanged, &filter_, &RunFilter::setText);

    regular_expression_ = new QCheckBox(tr("Regex"));
    regular_expression_->setObjectName(QStringLiteral("runSearchRegex"));
    regular_expression_->setToolTip(
        tr("Match the text as a regular expression (case-insensitive) against each run's name, "
           "tags and configuration"));
    regular_expression_->setChecked(filter_.isRegularExpression());
    connect(regular_expression_, &QCheckBox::toggled, &filter_, &RunFilter::setRegularExpression);

    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(search_, 1);
    row->addWidget(regular_expression_);
    for (const RunFilter::Field field : RunFilter::all_fields) {
        auto* box = new QComboBox;
        box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        auto* title = new QLabel(RunFilter::fieldTitle(field) + QLatin1Char(':'));
        title->setBuddy(box);
        row->addSpacing(8);
        row->addWidget(title);
        row->addWidget(box);
        fields_[field] = box;
        connect(box, &QComboBox::currentIndexChanged, this,
                [this, field, box] { filter_.setField(field, box->currentData().toString()); });
    }
    count_ = new QLabel;
    count_->setObjectName(QStringLiteral("runCount"));
    row->addSpacing(8);
    row->addWidget(count_);

    differences_ = new QCheckBox(tr("What differs"));
    differences_->setObjectName(QStringLiteral("runDifferences"));
    differences_->setToolTip(
        tr("Show in the Configuration column only the settings that differ among the runs "
           "listed (those hidden on the charts too), not whole configurations; a group counts "
           "once, with its first seed"));
    connect(differences_, &QCheckBox::toggled, this, &RunFilterBar::updateDifferences);
    connect(differences_, &QCheckBox::toggled, this, &RunFilterBar::onlyDifferencesToggled);

    error_ = new QLabel;
    error_->setObjectName(QStringLiteral("runSearchError"));
    show_in_problem_colour(*error_);
    error_->hide();
    connect(&filter_, &RunFilter::errorChanged, this, [this](const QString& error) {
        error_->setText(error);
        error_->setVisible(!error.isEmpty());
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 2);
    layout->setSpacing(2);
    layout->addLayout(row);
    // "What differs" on a line of its own, before a pattern's error: the first line is full on
    // a 1024-pixel screen.
    auto* second_row = new QHBoxLayout;
    second_row->setContentsMargins(0, 0, 0, 0);
    second_row->addWidget(differences_);
    second_row->addSpacing(8);
    second_row->addWidget(error_, 1);
    layout->addLayout(second_row);

    // The field boxes offer the values of every run; the count follows the rows shown.
    QAbstractItemModel* runs = filter_.sourceModel();
    connect(runs, &QAbstractItemModel::rowsInserted, this, &RunFilterBar::fillFieldBoxes);
    connect(runs, &QAbstractItemModel::rowsRemoved, this, &RunFilterBar::fillFieldBoxes);
    connect(runs, &QAbstractItemModel::modelReset, this, &RunFilterBar::fillFieldBoxes);
    connect(&filter_, &QAbstractItemModel::rowsInserted, this, &RunFilterBar::updateCount);
    connect(&filter_, &QAbstractItemModel::rowsRemoved, this, &RunFilterBar::updateCount);
    connect(&filter_, &QAbstractItemModel::modelReset, this, &RunFilterBar::updateCount);
    connect(&filter_, &QAbstractItemModel::layoutChanged, this, &RunFilterBar::updateCount);
    for (const auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(&filter_, signal, this, &RunFilterBar::updateDifferences);
    connect(&filter_, &QAbstractItemModel::modelReset, this, &RunFilterBar::updateDifferences);
    connect(&filter_, &QAbstractItemModel::layoutChanged, this, &RunFilterBar::updateDifferences);
    fillFieldBoxes();
    updateCount();
}

QString RunFilterBar::errorText() const {
    return error_->isHidden() ? QString() : error_->text();
}

void RunFilterBar::fillFieldBoxes() {
    for (const auto& [field, box] : fields_) {
        const QString chosen = filter_.field(field);
        QStringList values = filter_.valuesPresent(field);
        // A chosen value stays offered after its last run goes, so the filter never changes
        // behind the user's back.
        if (!chosen.isEmpty() && !values.contains(chosen))
            values << chosen;
        const QSignalBlocker quiet(box);
        box->clear();
        box->addItem(tr("any"), QString());
        for (const QString& value : values)
            box->addItem(value, value);
        box->setCurrentIndex(std::max(0, box->findData(chosen)));
    }
}

void RunFilterBar::updateCount() {
    const int all = filter_.sourceModel()->rowCount();
    const int shown = filter_.rowCount();
    count_->setText(shown < all ? tr("%1 of %2 shown").arg(shown).arg(all) : QString());
}

void RunFilterBar::updateDifferences() {
    auto* model = qobject_cast<RunTableModel*>(filter_.sourceModel());
    if (model == nullptr)
        return;
    std::vector<int> listed;
    // Group rows hold their members as children where the table nests them.
    const std::function<void(const QModelIndex&)> collect = [&](const QModelIndex& parent) {
        for (int row = 0; row < filter_.rowCount(parent); ++row) {
            const QModelIndex index = filter_.index(row, 0, parent);
            if (const int id = index.data(RunTableModel::RunIdRole).toInt(); id > 0)
                listed.push_back(id);
            collect(index);
        }
    };
    if (differences_->isChecked())
        collect({});
    model->setOnlyDifferences(differences_->isChecked(), listed);
}

void RunFilterBar::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange)
        show_in_problem_colour(*error_);
    QWidget::changeEvent(event);
}

}  // namespace scalelab
