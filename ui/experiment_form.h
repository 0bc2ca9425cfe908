#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "backend/device_inventory.h"
#include "train/run_spec.h"
#include "train/spec_fields.h"

class QCheckBox;
class QComboBox;
class QFrame;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QToolButton;

namespace scalelab {

class NumberSpinBox;

// The experiment panel: every RunSpec field as an editor, grouped as the course presents them
// (devices and batch, model and data, optimizer, schedule, warm-up; the rest under "Advanced"),
// with the global batch and the effective learning rate kept up to date as the user types, and
// a sweep section that expands lists of device counts, batch sizes and learning rates into runs.
//
// Bad input is never corrected behind the user's back: spin boxes accept out-of-range values so
// that validation can say what is wrong, each problem is shown at its field (red frame, a line
// under the field, the field's tooltip), problems without a visible field are listed above
// Start, and Start stays disabled until the form describes a valid run.
//
// Editors are reachable by their RunSpec field name (field("batch")), which is also their
// objectName; "global_batch", "repeats", "sweep_devices", "sweep_batches" and "sweep_lrs" name
// the editors that are not RunSpec fields.
class ExperimentForm : public QWidget {
    Q_OBJECT

  public:
    explicit ExperimentForm(const DeviceInventory& inventory, QWidget* parent = nullptr);

    // The run the form describes. Fields whose text cannot be read (a bad list entry) keep the
    // RunSpec default; isValid() is false then.
    RunSpec spec() const;
    // Shows every field of `spec`, exactly: spec() afterwards equals it.
    void setSpec(const RunSpec& spec);

    bool isValid() const;
    // Every problem, each a sentence saying what to change; empty when isValid().
    QStringList problems() const;
    // The problem shown at a field ("" when none), by the names field() takes.
    QString fieldProblem(const QString& name) const;
    // The editor of a field, by RunSpec field name or one of the extra names above; nullptr for
    // an unknown name.
    QWidget* field(const QString& name) const;

    // How many runs Start queues of spec(), over seeds seed .. seed + repeats - 1 as one group
    // (the Repeats field, "repeats"); a sweep repeats each of its runs as many times, each its
    // own group. Meaningful while isValid().
    int repeats() const;
    // Shows `repeats` in the Repeats field; a count out of range is shown and marked, as typed.
    void setRepeats(int repeats);

    // The sweep's runs: device counts x batch sizes x learning rates, devices outermost, each a
    // copy of spec() with those three values; an empty list stands for the form's value.
    // Empty when !sweepValid().
    std::vector<RunSpec> sweepSpecs() const;
    // The form is valid and so is every run of the sweep.
    bool sweepValid() const;

    // Presenter mode hides the "Advanced" section entirely (its problems still block Start and
    // are listed above it).
    void setAdvancedVisible(bool visible);

    // The form's spec as the indented JSON file `scalelab-cli train --config` reads. Fails, with
    // the field to fix, while a field's text cannot be read, so that the file never holds a
    // value other than the one shown.
    bool saveConfig(const QString& path, QString* error) const;
    // Reads such a file on top of the RunSpec defaults and shows it. A file that cannot be read,
    // does not parse or has a bad field leaves the form unchanged, and `error` names the field.
    bool loadConfig(const QString& path, QString* error);

    // As wide as the widest row of fields (with the vertical scroll bar beside them), so that
    // no field is ever cut off on the right.
    QSize minimumSizeHint() const override;

  signals:
    void startRequested();
    void sweepRequested();
    void validityChanged(bool valid);
    void specChanged();

  protected:
    // Takes the message colours of a new theme (see changeEvent in the .cpp).
    void changeEvent(QEvent* event) override;

  private:
    // A problem and the field it belongs to ("" when it names none).
    struct Problem {
        QString field;
        QString message;
    };
    // A row of the form: its caption (none for a check box), the editor in the frame that turns
    // red on a problem, the problem line under it, and the help the editor's tooltip shows when
    // there is no problem.
    struct FieldRow {
        QString name;
        QLabel* caption = nullptr;
        QWidget* editor = nullptr;
        QFrame* frame = nullptr;
        QWidget* row = nullptr;
        QLabel* problemLabel = nullptr;
        QString help;
    };
    // How one RunSpec field is shown in its editor and read back from it; read returns what is
    // wrong with the editor's text, "" when it could be read.
    struct Binding {
        QString name;
        std::function<void(const RunSpec&)> show;
        std::function<QString(RunSpec&)> read;
    };

    // Editors bound to RunSpec fields, by the field's type.
    QSpinBox* bind(const char* name, int RunSpec::*member);
    NumberSpinBox* bind(const char* name, double RunSpec::*member);
    // A check box whose text is the field's label (spec_fields.h).
    QCheckBox* bind(const char* name, bool RunSpec::*member);
    template <typename Enum>
    QComboBox* bindEnum(const char* name, Enum RunSpec::*member);
    QComboBox* bindChoice(const char* name, std::string RunSpec::*member,
                          const std::vector<std::string>& choices);
    QLineEdit* bind(const char* name, std::string RunSpec::*member);
    QLineEdit* bind(const char* name, std::vector<int> RunSpec::*member);
    QLineEdit* bind(const char* name, std::vector<double> RunSpec::*member);
    QLineEdit* bind(const char* name, std::uint64_t RunSpec::*member);
    // The line edit behind the four above: `format` shows the field's value as text, `parse`
    // reads the text back (nothing, and its problem set, when it cannot).
    template <typename T>
    QLineEdit* bindText(const char* name, T RunSpec::*member, QString (*format)(const T&),
                        std::optional<T> (*parse)(const QString&, QString*));

    // Adds `editor` (and `beside` it, if given) as a row with its problem line under it.
    void addRow(QGridLayout* layout, const QString& label, QWidget* editor, const QString& help,
                QWidget* beside = nullptr);
    // The row of a RunSpec field's editor (named after the field): its label, tooltip and when
    // it shows come from the field table (spec_fields.h).
    void addFieldRow(QGridLayout* layout, QWidget* editor, QWidget* beside = nullptr);
    // A row for each field of the table that no group placed by hand (a field just added):
    // an editor of its type at the end of its group, so that a new field needs no form code.
    void addUnplacedFieldRows();
    // Gives `box` a unit that agrees with its value: "1 epoch", "2 epochs".
    void countIn(QSpinBox* box, const QString& one, const QString& many);
    const FieldRow* findRow(const QString& name) const;
    void showRow(const FieldRow& row, bool shown);
    bool isShown(const FieldRow& row) const;

    QWidget* buildDevicesGroup();
    QWidget* buildModelGroup();
    QWidget* buildTrainingGroup();
    QWidget* buildOptimizerGroup();
    QWidget* buildScheduleGroup();
    QWidget* buildWarmupGroup();
    QWidget* buildAdvancedSection();
    QWidget* buildSweepGroup();

    // The spec, and what could not be read from which field.
    RunSpec readSpec(std::vector<Problem>* unreadable) const;
    // What is wrong with a spec the form could run: the form's own rules for this machine,
    // then RunSpec::validate()'s messages, each assigned to the field it names. Fields in
    // `taken` already have a problem and get no second one.
    std::vector<Problem> specProblems(const RunSpec& spec, QStringList taken = {}) const;
    // Every problem of the form as it stands.
    std::vector<Problem> collectProblems() const;
    // The sweep lists' values and their problems (bad entries, runs that would be invalid).
    struct Sweep {
        std::vector<int> devices;
        std::vector<int> batches;
        std::vector<double> lrs;
        std::vector<Problem> problems;
        // How many runs it expands to (an empty list counts as the form's one value).
        std::size_t runs() const;
    };
    Sweep readSweep() const;

    void browseDataFolder();
    void onGlobalBatchEdited(int global);
    // Brings every derived part of the form up to date with its editors: the global batch,
    // which rows show, the effective LR, the device warning, the problems, the buttons.
    void refresh();
    void updateRelevantRows(const RunSpec& spec);
    void updateEffectiveLr(const RunSpec& spec);
    void updateDeviceWarning(const RunSpec& spec);
    void showProblems();

    DeviceInventory inventory_;
    QScrollArea* scroll_ = nullptr;
    std::vector<FieldRow> rows_;
    std::map<FieldGroup, QGridLayout*> groupLayouts_;  // where each group's rows go
    std::vector<Binding> bindings_;
    struct CountUnit {
        QSpinBox* box = nullptr;
        QString one;
        QString many;
    };
    std::vector<CountUnit> units_;

    QSpinBox* devices_ = nullptr;
    QSpinBox* batch_ = nullptr;
    QSpinBox* globalBatch_ = nullptr;
    QSpinBox* repeats_ = nullptr;
    QComboBox* dataset_ = nullptr;
    QLineEdit* dataDir_ = nullptr;
    QPushButton* browse_ = nullptr;
    QLabel* coresNote_ = nullptr;  // "2 devices × 1 thread = 2 of 2 cores"
    QLabel* deviceWarning_ = nullptr;
    QLabel* effectiveLr_ = nullptr;
    QLineEdit* sweepDevices_ = nullptr;
    QLineEdit* sweepBatches_ = nullptr;
    QLineEdit* sweepLrs_ = nullptr;
    QPushButton* sweepButton_ = nullptr;
    QToolButton* advancedToggle_ = nullptr;
    QWidget* advancedBody_ = nullptr;
    QWidget* advancedSection_ = nullptr;
    QLabel* generalProblems_ = nullptr;
    QPushButton* startButton_ = nullptr;

    // The global batch typed by the user when it does not fit the devices and accumulation;
    // the batch per device keeps its value meanwhile.
    QString globalBatchProblem_;
    // The devices, batch and accumulation the global batch field was last set from; when they
    // differ from the editors', one of the three was edited and the global batch follows.
    std::optional<std::tuple<int, int, int>> globalBatchFactors_;
    std::vector<Problem> problems_;
    std::vector<Problem> sweepProblems_;
    bool valid_ = false;
    // setSpec() is filling the editors: their change signals must not refresh half a spec.
    bool showingSpec_ = false;
};

}  // namespace scalelab
