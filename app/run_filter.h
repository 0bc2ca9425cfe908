#pragma once

#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QString>
#include <QStringList>

#include <array>
#include <map>

#include "train/run_spec.h"

namespace scalelab {

class RunTableModel;
struct RunRecord;

// Which rows of a RunTableModel the run table shows, in the model's order: a group's row while
// one of its runs is.
//
// The text matches a run's name, tags and configuration summary, case-insensitively: as plain
// text every word of it has to appear in one of them; as a regular expression the pattern has
// to match one of them. A pattern that is not a valid regular expression hides nothing and
// error() says what is wrong with it. Each configuration field, when set, keeps only the runs
// whose value of that field reads exactly the same.
class RunFilter : public QSortFilterProxyModel {
    Q_OBJECT

  public:
    enum class Field { Devices, GlobalBatch, Optimizer, LrRule };
    static constexpr std::array<Field, 4> all_fields = {Field::Devices, Field::GlobalBatch,
                                                        Field::Optimizer, Field::LrRule};

    explicit RunFilter(RunTableModel& model, QObject* parent = nullptr);

    void setText(const QString& text);
    QString text() const { return text_; }
    void setRegularExpression(bool on);
    bool isRegularExpression() const { return regular_expression_; }
    // Why the text is not a valid regular expression; empty when it is, or in plain-text mode.
    QString error() const { return error_; }

    // Keeps only runs whose `field` reads `value` (fieldValue()); an empty value keeps all.
    void setField(Field field, const QString& value);
    QString field(Field field) const;
    // Whether any text or field is set.
    bool isActive() const;

    // A run's value of `field` as the filter compares it: devices "2", global batch "256" (devices
    // × batch × accumulation), optimizer "lars", LR rule "linear".
    static QString fieldValue(const RunSpec& spec, Field field);
    // "Devices", "Global batch", "Optimizer", "LR rule".
    static QString fieldTitle(Field field);
    // The values of `field` among the model's runs, each once: numbers in increasing order,
    // names alphabetically.
    QStringList valuesPresent(Field field) const;

  signals:
    void errorChanged(const QString& error);

  protected:
    bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

  private:
    bool textAccepts(const RunRecord& run) const;
    void update();

    RunTableModel& model_;
    QString text_;
    bool regular_expression_ = false;
    QRegularExpression pattern_;
    QStringList words_;
    QString error_;
    std::map<Field, QString> fields_;
};

}  // namespace scalelab
