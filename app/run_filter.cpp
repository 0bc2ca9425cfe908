#include "run_filter.h"

#include <algorithm>
#include <set>

#include "run_collection.h"
#include "run_summary.h"
#include "run_table_model.h"

namespace scalelab {

RunFilter::RunFilter(RunTableModel& model, QObject* parent)
    : QSortFilterProxyModel(parent), model_(model) {
    setSourceModel(&model_);
    // Names and tags change while the filter is set: rows come and go with them.
    setDynamicSortFilter(true);
    // A group's row has no run of its own: it is shown while one of its runs is.
    setRecursiveFilteringEnabled(true);
}

void RunFilter::setText(const QString& text) {
    if (text == text_)
        return;
    text_ = text;
    update();
}

void RunFilter::setRegularExpression(bool on) {
    if (on == regular_expression_)
        return;
    regular_expression_ = on;
    update();
}

void RunFilter::setField(Field field, const QString& value) {
    if (this->field(field) == value)
        return;
    if (value.isEmpty())
        fields_.erase(field);
    else
        fields_[field] = value;
    invalidateFilter();
}

QString RunFilter::field(Field field) const {
    const auto it = fields_.find(field);
    return it == fields_.end() ? QString() : it->second;
}

bool RunFilter::isActive() const {
    return !text_.trimmed().isEmpty() || !fields_.empty();
}

void RunFilter::update() {
    const QString previous_error = error_;
    error_.clear();
    words_.clear();
    pattern_ = QRegularExpression();
    if (regular_expression_) {
        pattern_ = QRegularExpression(text_, QRegularExpression::CaseInsensitiveOption);
        if (!pattern_.isValid())
            error_ = tr("Not a valid regular expression: %1 at character %2")
                         .arg(pattern_.errorString())
                         .arg(pattern_.patternErrorOffset() + 1);
    } else {
        words_ = text_.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    }
    invalidateFilter();
    if (error_ != previous_error)
        emit errorChanged(error_);
}

bool RunFilter::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
    const RunRecord* run =
        model_.runs().find(model_.runId(model_.index(source_row, 0, source_parent)));
    if (run == nullptr)
        return false;
    for (const auto& [field, value] : fields_)
        if (fieldValue(run->spec, field) != value)
            return false;
    return textAccepts(*run);
}

bool RunFilter::textAccepts(const RunRecord& run) const {
    const QString texts[] = {run.name, run.tags.join(QStringLiteral(", ")),
                             configuration_summary(run.spec)};
    if (regular_expression_) {
        if (text_.isEmpty() || !pattern_.isValid())
            return true;
        return std::any_of(std::begin(texts), std::end(texts),
                           [&](const QString& text) { return pattern_.match(text).hasMatch(); });
    }
    return std::all_of(words_.begin(), words_.end(), [&](const QString& word) {
        return std::any_of(std::begin(texts), std::end(texts), [&](const QString& text) {
            return text.contains(word, Qt::CaseInsensitive);
        });
    });
}

QString RunFilter::fieldValue(const RunSpec& spec, Field field) {
    switch (field) {
        case Field::Devices:
            return QString::number(spec.devices);
        case Field::GlobalBatch:
            return QString::number(spec.devices * spec.batch * spec.accumulation);
        case Field::Optimizer:
            return QString::fromUtf8(to_string(spec.optimizer));
        case Field::LrRule:
            return QString::fromUtf8(to_string(spec.lr_scaling));
    }
    return {};
}

QString RunFilter::fieldTitle(Field field) {
    switch (field) {
        case Field::Devices:
            return tr("Devices");
        case Field::GlobalBatch:
            return tr("Global batch");
        case Field::Optimizer:
            return tr("Optimizer");
        case Field::LrRule:
            return tr("LR rule");
    }
    return {};
}

QStringList RunFilter::valuesPresent(Field field) const {
    const bool numeric = field == Field::Devices || field == Field::GlobalBatch;
    const auto before = [numeric](const QString& a, const QString& b) {
        return numeric ? a.toLongLong() < b.toLongLong() : a < b;
    };
    std::set<QString, decltype(before)> values(before);
    for (const int id : model_.runs().ids())
        values.insert(fieldValue(model_.runs().find(id)->spec, field));
    return QStringList(values.begin(), values.end());
}

}  // namespace scalelab
