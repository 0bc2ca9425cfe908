#include "experiment_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFrame>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "data/load.h"
#include "error.h"
#include "number_lists.h"
#include "number_spin_box.h"
#include "repeats.h"
#include "run_collection.h"
#include "run_group.h"
#include "run_spec_json.h"
#include "scaled_font.h"
#include "theme.h"
#include "train/dataset_request.h"
#include "train/run_gpus.h"
#include "train/run_spec.h"
#include "train/spec_fields.h"
#include "wheel_guard.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

constexpr int kIntMin = std::numeric_limits<int>::min();
constexpr int kIntMax = std::numeric_limits<int>::max();
// More runs than anyone watches, and a bound on what a mistyped list can allocate.

QString number(double value) {
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

QString plural(qint64 count, const QString& one, const QString& many) {
    return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? one : many);
}

// devices x batch x accumulation; nothing when it does not fit an int (one of the three is then
// far out of range and has a problem of its own).
std::optional<int> global_batch_of(const RunSpec& spec) {
    qint64 global = spec.devices;
    for (int factor : {spec.batch, spec.accumulation}) {
        global *= factor;
        if (global < kIntMin || global > kIntMax)
            return std::nullopt;
    }
    return int(global);
}

// The field a RunSpec::validate() message is about. Most messages start with the field's name;
// the others are matched by their opening words. "" when the message names no field.
QString field_of_message(const QString& message) {
    static const std::pair<const char*, const char*> openings[] = {
        {"model '", "model"},
        {"dataset '", "dataset"},
        {"the multistep schedule needs milestones", "milestones"},
        {"a warm-up in steps", "warmup_length"},
        {"the warm-up (", "warmup_length"},
        {"the per-epoch warm-up", "warmup_unit"},
    };
    for (const auto& [opening, field] : openings)
        if (message.startsWith(QLatin1String(opening)))
            return QLatin1String(field);
    const QString first = message.section(QLatin1Char(' '), 0, 0);
    return run_spec_json_keys().contains(first) ? first : QString();
}

void report(QString* error, const QString& message) {
    if (error)
        *error = message;
}

// Text and seeds as their line edits show them and read them back, in the shape of the
// number_lists.h parsers.
QString format_text(const std::string& text) {
    return QString::fromStdString(text);
}

std::optional<std::string> parse_text(const QString& text, QString*) {
    return text.toStdString();
}

QString format_uint64(const std::uint64_t& value) {
    return QString::number(value);
}

std::optional<std::uint64_t> parse_uint64(const QString& text, QString* problem) {
    bool ok = false;
    const qulonglong value = text.trimmed().toULongLong(&ok);
    if (!ok) {
        *problem = ExperimentForm::tr("'%1' is not a whole number from 0 to %2")
                       .arg(text)
                       .arg(std::numeric_limits<std::uint64_t>::max());
        return std::nullopt;
    }
    return value;
}

// An editor named as its field; a spin box or combo box ignores the wheel until it has the focus
// (WheelGuard), so that scrolling the form changes nothing.
template <typename Editor>
Editor* named(Editor* editor, const char* name) {
    editor->setObjectName(QLatin1String(name));
    if constexpr (std::is_base_of_v<QAbstractSpinBox, Editor> ||
                  std::is_base_of_v<QComboBox, Editor>)
        WheelGuard::install(editor);
    return editor;
}

// Captions on the left, editors on the right. A grid rather than a QFormLayout: Qt 6.4's
// QFormLayout writes past its buffers when a row is hidden while another row's height depends
// on its width (as word-wrapped problem lines do), and this form hides rows all the time.
QGridLayout* form_layout(QWidget* parent) {
    auto* layout = new QGridLayout(parent);
    layout->setColumnStretch(1, 1);
    return layout;
}

// A widget across both columns of the next row.
void add_wide(QGridLayout* layout, QWidget* widget) {
    layout->addWidget(widget, layout->rowCount(), 0, 1, 2);
}

QLabel* note(const QString& text, const char* role = nullptr) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    label->setFont(scaled_font(label->font(), 0.9));
    if (role)
        label->setProperty("role", QLatin1String(role));
    else
        label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

// Each editor sits in a frame whose border turns red when the field has a problem. The frame,
// not the editor, carries the border: a style-sheet border on a spin box or combo box replaces
// the platform style's drawing of the whole widget, arrows included.
constexpr int kFrameBorder = 1;  // the frame's border width in form_style()
QString form_style(Theme theme) {
    return QStringLiteral(R"(
QLabel[role="problem"] { color: %1; }
QLabel[role="warning"] { color: %2; }
QLabel#effective_lr { font-weight: bold; }
QFrame[role="field"] { border: 1px solid transparent; border-radius: 3px; }
QFrame[role="field"][problem="true"] { border-color: %1; }
QToolButton#advanced { border: none; }
)")
        .arg(problem_colour(theme).name(), warning_colour(theme).name());
}

}  // namespace

ExperimentForm::ExperimentForm(const DeviceInventory& inventory, QWidget* parent)
    : QWidget(parent), inventory_(inventory) {
    setStyleSheet(form_style(current_theme()));

    auto* content = new QWidget;
    auto* sections = new QVBoxLayout(content);
    for (QWidget* section :
         {buildDevicesGroup(), buildModelGroup(), buildTrainingGroup(), buildOptimizerGroup(),
          buildScheduleGroup(), buildWarmupGroup(), buildAdvancedSection(), buildSweepGroup()})
        sections->addWidget(section);
    addUnplacedFieldRows();
    sections->addStretch();
    // One caption width for every section, so that all editors line up.
    int caption_width = 0;
    for (const FieldRow& row : rows_)
        if (row.caption)
            caption_width = std::max(caption_width, row.caption->sizeHint().width());
    for (QGridLayout* grid : content->findChildren<QGridLayout*>())
        grid->setColumnMinimumWidth(0, caption_width);

    // Fields scroll up and down, never sideways: minimumSizeHint() keeps the form as wide as
    // its widest row.
    scroll_ = new QScrollArea;
    scroll_->setWidget(content);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    // Start stays in view below the scrolling fields, with whatever keeps it disabled.
    generalProblems_ = note({}, "problem");
    generalProblems_->setObjectName(QStringLiteral("problems"));
    generalProblems_->hide();
    startButton_ = new QPushButton(tr("Start"));
    startButton_->setObjectName(QStringLiteral("start"));
    startButton_->setDefault(true);
    connect(startButton_, &QPushButton::clicked, this, [this] {
        if (isValid())
            emit startRequested();
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll_, 1);
    auto* footer = new QVBoxLayout;
    footer->setContentsMargins(9, 0, 9, 9);
    footer->addWidget(generalProblems_);
    footer->addWidget(startButton_);
    layout->addLayout(footer);

    setSpec(RunSpec{});
}

// ---- Editors bound to RunSpec fields ----

QSpinBox* ExperimentForm::bind(const char* name, int RunSpec::*member) {
    auto* editor = named(new QSpinBox, name);
    // Every int: a value out of the field's range reaches validation, which says what to do,
    // instead of the keystroke being swallowed.
    editor->setRange(kIntMin, kIntMax);
    connect(editor, &QSpinBox::valueChanged, this, &ExperimentForm::refresh);
    bindings_.push_back({editor->objectName(),
                         [editor, member](const RunSpec& spec) { editor->setValue(spec.*member); },
                         [editor, member](RunSpec& spec) {
                             spec.*member = editor->value();
                             return QString();
                         }});
    return editor;
}

NumberSpinBox* ExperimentForm::bind(const char* name, double RunSpec::*member) {
    auto* editor = named(new NumberSpinBox, name);
    connect(editor, &NumberSpinBox::valueChanged, this, &ExperimentForm::refresh);
    bindings_.push_back({editor->objectName(),
                         [editor, member](const RunSpec& spec) { editor->setValue(spec.*member); },
                         [editor, member](RunSpec& spec) {
                             spec.*member = editor->value();
                             return QString();
                         }});
    return editor;
}

QCheckBox* ExperimentForm::bind(const char* name, bool RunSpec::*member) {
    const std::string_view label = spec_field(member).label;
    auto* editor =
        named(new QCheckBox(QString::fromUtf8(label.data(), qsizetype(label.size()))), name);
    connect(editor, &QCheckBox::toggled, this, &ExperimentForm::refresh);
    bindings_.push_back(
        {editor->objectName(),
         [editor, member](const RunSpec& spec) { editor->setChecked(spec.*member); },
         [editor, member](RunSpec& spec) {
             spec.*member = editor->isChecked();
             return QString();
         }});
    return editor;
}

template <typename Enum>
QComboBox* ExperimentForm::bindEnum(const char* name, Enum RunSpec::*member) {
    auto* editor = named(new QComboBox, name);
    static constexpr const auto& entries = EnumNames<Enum>::table.entries;
    for (const auto& [value, text] : entries) {
        editor->addItem(QString::fromUtf8(text.data(), qsizetype(text.size())));
    }
    connect(editor, &QComboBox::currentIndexChanged, this, &ExperimentForm::refresh);
    bindings_.push_back({editor->objectName(),
                         [editor, member](const RunSpec& spec) {
                             const auto it = std::ranges::find(
                                 entries, spec.*member, &std::pair<Enum, std::string_view>::first);
                             editor->setCurrentIndex(int(it - entries.begin()));
                         },
                         [editor, member](RunSpec& spec) {
                             spec.*member = entries[std::size_t(editor->currentIndex())].first;
                             return QString();
                         }});
    return editor;
}

QComboBox* ExperimentForm::bindChoice(const char* name, std::string RunSpec::*member,
                                      const std::vector<std::string>& choices) {
    auto* editor = named(new QComboBox, name);
    for (const std::string& choice : choices)
        editor->addItem(QString::fromStdString(choice));
    connect(editor, &QComboBox::currentIndexChanged, this, &ExperimentForm::refresh);
    bindings_.push_back({editor->objectName(),
                         [editor, member](const RunSpec& spec) {
                             // A name the engine does not know (from a config file) is shown
                             // as it is, so that validation can name it at the field.
                             const QString text = QString::fromStdString(spec.*member);
                             if (editor->findText(text) < 0)
                                 editor->addItem(text);
                             editor->setCurrentIndex(editor->findText(text));
                         },
                         [editor, member](RunSpec& spec) {
                             spec.*member = editor->currentText().toStdString();
                             return QString();
                         }});
    return editor;
}

template <typename T>
QLineEdit* ExperimentForm::bindText(const char* name, T RunSpec::*member,
                                    QString (*format)(const T&),
                                    std::optional<T> (*parse)(const QString&, QString*)) {
    auto* editor = named(new QLineEdit, name);
    connect(editor, &QLineEdit::textChanged, this, &ExperimentForm::refresh);
    bindings_.push_back(
        {editor->objectName(),
         [editor, member, format](const RunSpec& spec) { editor->setText(format(spec.*member)); },
         [editor, member, parse](RunSpec& spec) {
             QString problem;
             if (std::optional<T> value = parse(editor->text(), &problem))
                 spec.*member = std::move(*value);
             return problem;
         }});
    return editor;
}

QLineEdit* ExperimentForm::bind(const char* name, std::string RunSpec::*member) {
    return bindText(name, member, format_text, parse_text);
}

QLineEdit* ExperimentForm::bind(const char* name, std::vector<int> RunSpec::*member) {
    return bindText(name, member, format_list, parse_whole_numbers);
}

QLineEdit* ExperimentForm::bind(const char* name, std::vector<double> RunSpec::*member) {
    return bindText(name, member, format_list, parse_numbers);
}

QLineEdit* ExperimentForm::bind(const char* name, std::uint64_t RunSpec::*member) {
    return bindText(name, member, format_uint64, parse_uint64);
}

// ---- Layout ----

void ExperimentForm::addRow(QGridLayout* layout, const QString& label, QWidget* editor,
                            const QString& help, QWidget* beside) {
    // Spin boxes size themselves for their widest value; the whole int range would make the
    // panel wider than it needs to be.
    if (qobject_cast<QAbstractSpinBox*>(editor))
        editor->setMinimumWidth(editor->fontMetrics().horizontalAdvance(QStringLiteral("0")) * 12);
    editor->setToolTip(help);
    auto* frame = new QFrame;
    frame->setProperty("role", QStringLiteral("field"));
    auto* framed = new QHBoxLayout(frame);
    framed->setContentsMargins(0, 0, 0, 0);
    framed->addWidget(editor);

    auto* row = new QWidget;
    auto* column = new QVBoxLayout(row);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    if (beside) {
        auto* line = new QHBoxLayout;
        line->addWidget(frame, 1);
        line->addWidget(beside);
        column->addLayout(line);
    } else {
        column->addWidget(frame);
    }
    auto* problem = note({}, "problem");
    problem->setObjectName(editor->objectName() + QStringLiteral("_problem"));
    problem->hide();
    column->addWidget(problem);

    const int at = layout->rowCount();
    QLabel* caption = label.isEmpty() ? nullptr : new QLabel(label);
    if (caption) {
        caption->setBuddy(editor);
        // Level with the editor's text, not with the problem line under it.
        caption->setMinimumHeight(editor->sizeHint().height() + 2 * kFrameBorder);
        layout->addWidget(caption, at, 0, Qt::AlignTop);
    }
    // A check box says what it is itself: it takes the caption's column too, so that its text
    // does not widen the form.
    if (caption)
        layout->addWidget(row, at, 1);
    else
        layout->addWidget(row, at, 0, 1, 2);
    rows_.push_back({editor->objectName(), caption, editor, frame, row, problem, help});
}

void ExperimentForm::addFieldRow(QGridLayout* layout, QWidget* editor, QWidget* beside) {
    const SpecField* field = find_spec_field(editor->objectName().toStdString());
    Q_ASSERT_X(field, "addFieldRow", "an editor named after no field of spec_fields.h");
    const auto text = [](std::string_view view) {
        return QString::fromUtf8(view.data(), qsizetype(view.size()));
    };
    // A check box says its label itself; other editors get a caption.
    const QString label = qobject_cast<QCheckBox*>(editor) ? QString() : text(field->label);
    QString help = text(field->help);
    if (!field->applies_when.empty())
        help += QStringLiteral(" (%1)").arg(text(field->applies_when));
    addRow(layout, label, editor, help, beside);
}

void ExperimentForm::addUnplacedFieldRows() {
    for (const SpecField& field : spec_fields()) {
        const QString key = QString::fromUtf8(field.key.data(), qsizetype(field.key.size()));
        if (findRow(key))
            continue;
        const QByteArray name = key.toUtf8();
        QWidget* editor = std::visit(
            [&](auto member) -> QWidget* {
                using T = std::remove_cvref_t<decltype(RunSpec{}.*member)>;
                if constexpr (std::is_enum_v<T>)
                    return bindEnum(name.constData(), member);
                else if constexpr (std::is_same_v<T, std::string>) {
                    if (field.names)
                        return bindChoice(name.constData(), member, field.names());
                    return bind(name.constData(), member);
                } else
                    return bind(name.constData(), member);
            },
            field.member);
        addFieldRow(groupLayouts_.at(field.group), editor);
    }
}

void ExperimentForm::countIn(QSpinBox* box, const QString& one, const QString& many) {
    units_.push_back({box, one, many});
}

const ExperimentForm::FieldRow* ExperimentForm::findRow(const QString& name) const {
    const auto it = std::find_if(rows_.begin(), rows_.end(),
                                 [&](const FieldRow& row) { return row.name == name; });
    return it == rows_.end() ? nullptr : &*it;
}

void ExperimentForm::showRow(const FieldRow& row, bool shown) {
    if (row.caption)
        row.caption->setVisible(shown);
    row.row->setVisible(shown);
}

bool ExperimentForm::isShown(const FieldRow& row) const {
    return row.editor->isVisibleTo(this);
}

QWidget* ExperimentForm::buildDevicesGroup() {
    auto* group = new QGroupBox(tr("Devices and batch"));
    auto* layout = form_layout(group);
    groupLayouts_[FieldGroup::DevicesAndBatch] = layout;

    if (!inventory_.gpus.empty()) {
        QStringList gpus;
        for (const GpuDescription& gpu : inventory_.gpus)
            gpus.append(tr("GPU %1: %2, %3 GiB")
                            .arg(gpu.index)
                            .arg(QString::fromStdString(gpu.name))
                            .arg(double(gpu.memory_bytes) / double(1ull << 30), 0, 'f', 1));
        auto* list = new QLabel(gpus.join(QLatin1Char('\n')));
        list->setWordWrap(true);
        add_wide(layout, list);
    } else {
        add_wide(
            layout,
            new QLabel(
                tr("CPU devices: %1").arg(plural(inventory_.cpu_cores, tr("core"), tr("cores")))));
        if (!inventory_.no_gpu_reason.empty())
            add_wide(layout, note(QString::fromStdString(inventory_.no_gpu_reason)));
    }

    addFieldRow(layout, bindEnum("device", &RunSpec::device));
    devices_ = bind("devices", &RunSpec::devices);
    addFieldRow(layout, devices_);
    auto* threads = bind("threads", &RunSpec::threads);
    countIn(threads, tr(" thread"), tr(" threads"));
    addFieldRow(layout, threads);
    coresNote_ = note({});
    coresNote_->setObjectName(QStringLiteral("cores_note"));
    add_wide(layout, coresNote_);
    auto* gpus = bind("gpus", &RunSpec::gpus);
    gpus->setPlaceholderText(tr("the first ones; or indices, e.g. 0, 2"));
    addFieldRow(layout, gpus);
    addFieldRow(layout, bind("tf32", &RunSpec::tf32));
    addFieldRow(layout, bind("deterministic", &RunSpec::deterministic));
    deviceWarning_ = note({}, "warning");
    deviceWarning_->setObjectName(QStringLiteral("device_warning"));
    deviceWarning_->hide();
    add_wide(layout, deviceWarning_);

    batch_ = bind("batch", &RunSpec::batch);
    countIn(batch_, tr(" image"), tr(" images"));
    addFieldRow(layout, batch_);

    globalBatch_ = named(new QSpinBox, "global_batch");
    globalBatch_->setRange(kIntMin, kIntMax);
    countIn(globalBatch_, tr(" image"), tr(" images"));
    // Read when committed (Enter, leaving the field, the arrows), not at each key: on the way
    // to 256, "2" would set the batch per device to 1.
    globalBatch_->setKeyboardTracking(false);
    connect(globalBatch_, &QSpinBox::valueChanged, this, &ExperimentForm::onGlobalBatchEdited);
    addRow(layout, tr("Global batch"), globalBatch_,
           tr("Devices × batch per device × accumulation: the images one optimizer step "
              "averages over. Editing it sets the batch per device."));
    return group;
}

QWidget* ExperimentForm::buildModelGroup() {
    auto* group = new QGroupBox(tr("Model and data"));
    auto* layout = form_layout(group);
    groupLayouts_[FieldGroup::ModelAndData] = layout;
    addFieldRow(layout, bindChoice("model", &RunSpec::model, model_names()));
    addFieldRow(layout, bind("width", &RunSpec::width));
    dataset_ = bindChoice("dataset", &RunSpec::dataset, dataset_names());
    addFieldRow(layout, dataset_);
    dataDir_ = bind("data_dir", &RunSpec::data_dir);
    browse_ = new QPushButton(tr("Browse…"));
    connect(browse_, &QPushButton::clicked, this, &ExperimentForm::browseDataFolder);
    addFieldRow(layout, dataDir_, browse_);
    addFieldRow(layout, bindEnum("augment", &RunSpec::augment));
    return group;
}

QWidget* ExperimentForm::buildTrainingGroup() {
    auto* group = new QGroupBox(tr("Training"));
    auto* layout = form_layout(group);
    groupLayouts_[FieldGroup::Training] = layout;
    auto* epochs = bind("epochs", &RunSpec::epochs);
    countIn(epochs, tr(" epoch"), tr(" epochs"));
    addFieldRow(layout, epochs);
    auto* smoothing = bind("label_smoothing", &RunSpec::label_smoothing);
    smoothing->setSingleStep(0.05);
    addFieldRow(layout, smoothing);
    addFieldRow(layout, bind("seed", &RunSpec::seed));
    // Not a RunSpec field: a group's runs differ in their seed alone, so one spec plus a count.
    repeats_ = named(new QSpinBox, "repeats");
    repeats_->setRange(kIntMin, kIntMax);  // out of range reaches validation, as for the fields
    repeats_->setValue(1);
    connect(repeats_, &QSpinBox::valueChanged, this, &ExperimentForm::refresh);
    addRow(layout, tr("Repeats"), repeats_,
           tr("Runs of this experiment over seeds seed, seed + 1, ... (1 to %1), one group: the "
              "run table shows their mean and spread")
               .arg(most_repeats));
    auto* target = bind("target_accuracy", &RunSpec::target_accuracy);
    target->setSingleStep(0.01);
    addFieldRow(layout, target);
    auto* patience = bind("patience", &RunSpec::patience);
    countIn(patience, tr(" epoch"), tr(" epochs"));
    addFieldRow(layout, patience);
    return group;
}

QWidget* ExperimentForm::buildOptimizerGroup() {
    auto* group = new QGroupBox(tr("Optimizer"));
    auto* layout = form_layout(group);
    groupLayouts_[FieldGroup::Optimizer] = layout;
    addFieldRow(layout, bindEnum("optimizer", &RunSpec::optimizer));
    auto* lr = bind("lr", &RunSpec::lr);
    lr->setSingleStep(0.01);
    addFieldRow(layout, lr);
    addFieldRow(layout, bindEnum("lr_scaling", &RunSpec::lr_scaling));
    auto* reference = bind("reference_batch", &RunSpec::reference_batch);
    countIn(reference, tr(" image"), tr(" images"));
    addFieldRow(layout, reference);
    effectiveLr_ = new QLabel;
    effectiveLr_->setObjectName(QStringLiteral("effective_lr"));
    effectiveLr_->setWordWrap(true);
    add_wide(layout, effectiveLr_);

    auto* decay = bind("weight_decay", &RunSpec::weight_decay);
    decay->setSingleStep(0.0001);
    addFieldRow(layout, decay);
    auto* momentum = bind("momentum", &RunSpec::momentum);
    momentum->setSingleStep(0.01);
    addFieldRow(layout, momentum);
    addFieldRow(layout, bind("nesterov", &RunSpec::nesterov));
    auto* trust = bind("trust_coefficient", &RunSpec::trust_coefficient);
    trust->setSingleStep(0.001);
    addFieldRow(layout, trust);
    addFieldRow(layout, bind("larc", &RunSpec::larc));
    for (const auto& [name, member] :
         {std::pair{"beta1", &RunSpec::beta1}, std::pair{"beta2", &RunSpec::beta2},
          std::pair{"eps", &RunSpec::eps}}) {
        auto* editor = bind(name, member);
        editor->setSingleStep(0.001);
        addFieldRow(layout, editor);
    }
    addFieldRow(layout, bind("trust_clamp", &RunSpec::trust_clamp));
    addFieldRow(layout, bind("grad_averaging", &RunSpec::grad_averaging));
    addFieldRow(layout, bind("adapt_norm_and_bias", &RunSpec::adapt_norm_and_bias));
    return group;
}

QWidget* ExperimentForm::buildScheduleGroup() {
    auto* group = new QGroupBox(tr("Schedule"));
    auto* layout = form_layout(group);
    groupLayouts_[FieldGroup::Schedule] = layout;
    addFieldRow(layout, bindEnum("schedule", &RunSpec::schedule));
    auto* gamma = bind("gamma", &RunSpec::gamma);
    gamma->setSingleStep(0.05);
    addFieldRow(layout, gamma);
    auto* step = bind("step_epochs", &RunSpec::step_epochs);
    countIn(step, tr(" epoch"), tr(" epochs"));
    addFieldRow(layout, step);
    auto* milestones = bind("milestones", &RunSpec::milestones);
    milestones->setPlaceholderText(tr("epochs, e.g. 30, 60"));
    addFieldRow(layout, milestones);
    addFieldRow(layout, bind("min_lr", &RunSpec::min_lr));
    addFieldRow(layout, bind("poly_power", &RunSpec::poly_power));
    return group;
}

QWidget* ExperimentForm::buildWarmupGroup() {
    auto* group = new QGroupBox(tr("Warm-up"));
    auto* layout = form_layout(group);
    groupLayouts_[FieldGroup::Warmup] = layout;
    addFieldRow(layout, bindEnum("warmup", &RunSpec::warmup));
    addFieldRow(layout, bind("warmup_length", &RunSpec::warmup_length));
    addFieldRow(layout, bindEnum("warmup_unit", &RunSpec::warmup_unit));
    auto* start = bind("warmup_start_factor", &RunSpec::warmup_start_factor);
    start->setSingleStep(0.05);
    addFieldRow(layout, start);
    return group;
}

QWidget* ExperimentForm::buildAdvancedSection() {
    advancedSection_ = new QWidget;
    auto* column = new QVBoxLayout(advancedSection_);
    column->setContentsMargins(0, 0, 0, 0);
    advancedToggle_ = named(new QToolButton, "advanced");
    advancedToggle_->setText(tr("Advanced"));
    advancedToggle_->setCheckable(true);
    advancedToggle_->setArrowType(Qt::RightArrow);
    advancedToggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    advancedToggle_->setAutoRaise(true);
    advancedBody_ = new QGroupBox;
    advancedBody_->hide();
    connect(advancedToggle_, &QToolButton::toggled, this, [this](bool open) {
        advancedToggle_->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        advancedBody_->setVisible(open);
        updateGeometry();  // its rows may be wider: the dock takes the new minimum width
        refresh();         // problems of hidden fields move between their field and the list
    });
    column->addWidget(advancedToggle_);
    column->addWidget(advancedBody_);

    auto* layout = form_layout(advancedBody_);
    groupLayouts_[FieldGroup::Advanced] = layout;
    addFieldRow(layout, bind("accumulation", &RunSpec::accumulation));
    auto* bucket = bind("bucket_mb", &RunSpec::bucket_mb);
    bucket->setSuffix(tr(" MB"));
    addFieldRow(layout, bucket);
    auto* first = bind("first_bucket_mb", &RunSpec::first_bucket_mb);
    first->setSuffix(tr(" MB"));
    addFieldRow(layout, first);
    auto* timeout = bind("collective_timeout_s", &RunSpec::collective_timeout_s);
    timeout->setSuffix(tr(" s"));
    addFieldRow(layout, timeout);
    addFieldRow(layout, bind("overlap", &RunSpec::overlap));
    addFieldRow(layout, bind("sync_bn", &RunSpec::sync_bn));
    auto* ghost = bind("ghost_batch", &RunSpec::ghost_batch);
    countIn(ghost, tr(" image"), tr(" images"));
    addFieldRow(layout, ghost);
    addFieldRow(layout, bind("zero_init_residual", &RunSpec::zero_init_residual));
    addFieldRow(layout, bind("decay_norm_and_bias", &RunSpec::decay_norm_and_bias));
    auto* beta = bind("noise_scale_beta", &RunSpec::noise_scale_beta);
    beta->setSingleStep(0.01);
    addFieldRow(layout, beta);
    auto* targets = bind("targets", &RunSpec::targets);
    targets->setPlaceholderText(tr("e.g. 0.85, 0.9"));
    addFieldRow(layout, targets);
    for (const auto& [name, member] :
         {std::pair{"synthetic_train", &RunSpec::synthetic_train},
          std::pair{"synthetic_test", &RunSpec::synthetic_test},
          std::pair{"synthetic_channels", &RunSpec::synthetic_channels},
          std::pair{"synthetic_size", &RunSpec::synthetic_size}})
        addFieldRow(layout, bind(name, member));
    addFieldRow(layout, bind("train_subset", &RunSpec::train_subset));
    addFieldRow(layout, bind("test_subset", &RunSpec::test_subset));
    return advancedSection_;
}

QWidget* ExperimentForm::buildSweepGroup() {
    auto* group = new QGroupBox(tr("Queue sweep"));
    auto* layout = form_layout(group);
    add_wide(layout, note(tr("Every combination becomes a run, queued one after another. An empty "
                             "list uses the value above.")));
    auto list = [this](const char* name) {
        auto* editor = named(new QLineEdit, name);
        connect(editor, &QLineEdit::textChanged, this, &ExperimentForm::refresh);
        return editor;
    };
    sweepDevices_ = list("sweep_devices");
    addRow(layout, tr("Device counts"), sweepDevices_, tr("e.g. 1, 2, 4"));
    sweepBatches_ = list("sweep_batches");
    addRow(layout, tr("Batch sizes"), sweepBatches_, tr("Per device, e.g. 64, 128"));
    sweepLrs_ = list("sweep_lrs");
    addRow(layout, tr("Learning rates"), sweepLrs_, tr("Base learning rates, e.g. 0.05, 0.1"));
    sweepButton_ = named(new QPushButton, "queue_sweep");
    connect(sweepButton_, &QPushButton::clicked, this, [this] {
        if (sweepValid())
            emit sweepRequested();
    });
    add_wide(layout, sweepButton_);
    return group;
}

// ---- Reading and checking ----

RunSpec ExperimentForm::readSpec(std::vector<Problem>* unreadable) const {
    RunSpec spec;
    for (const Binding& binding : bindings_) {
        const QString problem = binding.read(spec);
        if (!problem.isEmpty() && unreadable)
            unreadable->push_back({binding.name, problem});
    }
    return spec;
}

RunSpec ExperimentForm::spec() const {
    return readSpec(nullptr);
}

std::vector<ExperimentForm::Problem> ExperimentForm::specProblems(const RunSpec& spec,
                                                                  QStringList taken) const {
    std::vector<Problem> problems;
    auto add = [&](const QString& field, const QString& message) {
        problems.push_back({field, message});
        taken.append(field);
    };
    if (spec.batch < 1)
        add(QStringLiteral("batch"), tr("batch size must be at least 1"));
    if (!(spec.lr > 0))
        add(QStringLiteral("lr"), tr("the learning rate must be above 0"));
    if (spec.device == DeviceKind::Gpu) {
        // The engine's own check of the GPUs against the machine, on the field to change.
        const GpuSelection selection = select_run_gpus(spec, inventory_);
        const QString field = inventory_.gpus.empty() ? QStringLiteral("device")
                              : spec.gpus.empty()     ? QStringLiteral("devices")
                                                      : QStringLiteral("gpus");
        for (const std::string& problem : selection.problems)
            add(field, QString::fromStdString(problem));
    }
    for (const std::string& error : spec.validate()) {
        const QString message = QString::fromStdString(error);
        const QString field = field_of_message(message);
        if (!taken.contains(field) || field.isEmpty())
            problems.push_back({field, message});
    }
    return problems;
}

std::vector<ExperimentForm::Problem> ExperimentForm::collectProblems() const {
    std::vector<Problem> problems;
    const RunSpec spec = readSpec(&problems);
    if (!globalBatchProblem_.isEmpty())
        problems.push_back({QStringLiteral("global_batch"), globalBatchProblem_});
    else if (!global_batch_of(spec))
        problems.push_back({QStringLiteral("global_batch"),
                            tr("devices × batch × accumulation is more than %1").arg(kIntMax)});
    // The engine's own check, so the form names exactly what the run would fail on.
    if (const std::string folder = data::dataset_folder_problem(dataset_request(spec));
        !folder.empty())
        problems.push_back({QStringLiteral("data_dir"), QString::fromStdString(folder)});
    if (const QString problem = repeats_problem(tr("Repeats"), repeats_->value(), spec.seed);
        !problem.isEmpty())
        problems.push_back({repeats_->objectName(), problem});
    QStringList taken;
    for (const Problem& problem : problems)
        taken.append(problem.field);
    for (Problem& problem : specProblems(spec, taken))
        problems.push_back(std::move(problem));
    return problems;
}

std::size_t ExperimentForm::Sweep::runs() const {
    auto count = [](std::size_t n) { return std::max<std::size_t>(n, 1); };
    return count(devices.size()) * count(batches.size()) * count(lrs.size());
}

ExperimentForm::Sweep ExperimentForm::readSweep() const {
    Sweep sweep;
    QString problem;
    if (auto devices = parse_whole_numbers(sweepDevices_->text(), &problem))
        sweep.devices = std::move(*devices);
    else
        sweep.problems.push_back({sweepDevices_->objectName(), problem});
    if (auto batches = parse_whole_numbers(sweepBatches_->text(), &problem))
        sweep.batches = std::move(*batches);
    else
        sweep.problems.push_back({sweepBatches_->objectName(), problem});
    if (auto lrs = parse_numbers(sweepLrs_->text(), &problem))
        sweep.lrs = std::move(*lrs);
    else
        sweep.problems.push_back({sweepLrs_->objectName(), problem});

    // Repeats multiply the sweep's runs; an invalid count is the Repeats field's problem.
    const std::size_t runs =
        sweep.runs() * std::size_t(std::clamp(repeats_->value(), 1, most_repeats));
    if (runs > std::size_t(most_runs_queued_at_once))
        sweep.problems.push_back({{},
                                  tr("the sweep has %1 runs; queue at most %2 at a time")
                                      .arg(runs)
                                      .arg(most_runs_queued_at_once)});

    // A value that would make an invalid run is named at its list. Judged only against a valid
    // form: otherwise the form's own problems explain what is wrong.
    if (!problems_.empty())
        return sweep;
    const RunSpec base = spec();
    auto check = [&](const auto& values, const QLineEdit* editor, auto apply) {
        for (const auto value : values) {
            RunSpec run = base;
            apply(run, value);
            const std::vector<Problem> problems = specProblems(run);
            if (!problems.empty()) {
                sweep.problems.push_back(
                    {editor->objectName(),
                     QStringLiteral("%1: %2").arg(number(value), problems.front().message)});
                return;
            }
        }
    };
    check(sweep.devices, sweepDevices_, [](RunSpec& run, int devices) { run.devices = devices; });
    check(sweep.batches, sweepBatches_, [](RunSpec& run, int batch) { run.batch = batch; });
    check(sweep.lrs, sweepLrs_, [](RunSpec& run, double lr) { run.lr = lr; });
    return sweep;
}

bool ExperimentForm::isValid() const {
    return problems_.empty();
}

QStringList ExperimentForm::problems() const {
    QStringList messages;
    for (const Problem& problem : problems_)
        messages.append(problem.message);
    return messages;
}

QString ExperimentForm::fieldProblem(const QString& name) const {
    const FieldRow* row = findRow(name);
    return row ? row->problemLabel->text() : QString();
}

QWidget* ExperimentForm::field(const QString& name) const {
    const FieldRow* row = findRow(name);
    return row ? row->editor : nullptr;
}

int ExperimentForm::repeats() const {
    return repeats_->value();
}

void ExperimentForm::setRepeats(int repeats) {
    repeats_->setValue(repeats);
}

bool ExperimentForm::sweepValid() const {
    return isValid() && readSweep().problems.empty();
}

std::vector<RunSpec> ExperimentForm::sweepSpecs() const {
    if (!sweepValid())
        return {};
    const Sweep sweep = readSweep();
    const RunSpec base = spec();
    auto or_base = [](auto values, auto value) {
        if (values.empty())
            values.push_back(value);
        return values;
    };
    std::vector<RunSpec> runs;
    for (int devices : or_base(sweep.devices, base.devices))
        for (int batch : or_base(sweep.batches, base.batch))
            for (double lr : or_base(sweep.lrs, base.lr)) {
                RunSpec run = base;
                run.devices = devices;
                run.batch = batch;
                run.lr = lr;
                runs.push_back(run);
            }
    return runs;
}

// ---- Editing ----

void ExperimentForm::setSpec(const RunSpec& spec) {
    showingSpec_ = true;
    for (const Binding& binding : bindings_)
        binding.show(spec);
    showingSpec_ = false;
    globalBatchProblem_.clear();
    globalBatchFactors_.reset();
    refresh();
}

QSize ExperimentForm::minimumSizeHint() const {
    const int rows = scroll_->widget()->minimumSizeHint().width();
    const int scroll_bar = scroll_->verticalScrollBar()->sizeHint().width();
    return {rows + scroll_bar, QWidget::minimumSizeHint().height()};
}

void ExperimentForm::changeEvent(QEvent* event) {
    // apply_theme() polishes widgets under a style sheet again; the form's sheet then takes the
    // new theme's colours (setting it sends StyleChange once more, which finds it unchanged).
    if (event->type() == QEvent::StyleChange) {
        const QString style = form_style(current_theme());
        if (styleSheet() != style)
            setStyleSheet(style);
    }
    QWidget::changeEvent(event);
}

void ExperimentForm::setAdvancedVisible(bool visible) {
    advancedSection_->setVisible(visible);
    refresh();
}

void ExperimentForm::browseDataFolder() {
    const QString start =
        dataDir_->text().isEmpty() ? dataDir_->placeholderText() : dataDir_->text();
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Dataset folder"), start);
    if (!folder.isEmpty())
        dataDir_->setText(QDir::toNativeSeparators(folder));
}

void ExperimentForm::onGlobalBatchEdited(int global) {
    const RunSpec current = spec();
    const qint64 per_batch = qint64(current.devices) * current.accumulation;
    if (global < 1) {
        globalBatchProblem_ = tr("the global batch must be at least 1");
    } else if (per_batch < 1) {
        globalBatchProblem_ = tr("set the devices and accumulation first");
    } else if (global % per_batch != 0) {
        // The multiples either side, as scalelab-cli --global-batch offers them.
        const qint64 below = global / per_batch * per_batch;
        const QString nearest = below >= 1 ? tr("%1 or %2").arg(below).arg(below + per_batch)
                                           : QString::number(per_batch);
        globalBatchProblem_ =
            current.accumulation == 1
                ? tr("%1 is not divisible by %2 devices; the nearest that are: %3")
                      .arg(global)
                      .arg(current.devices)
                      .arg(nearest)
                : tr("%1 is not divisible by %2 devices × %3 accumulation steps; the nearest "
                     "that are: %4")
                      .arg(global)
                      .arg(current.devices)
                      .arg(current.accumulation)
                      .arg(nearest);
    } else {
        globalBatchProblem_.clear();
        const int batch = int(global / per_batch);
        {
            const QSignalBlocker quiet(batch_);
            batch_->setValue(batch);
        }
        globalBatchFactors_ = std::tuple{current.devices, batch, current.accumulation};
    }
    refresh();
}

void ExperimentForm::refresh() {
    if (showingSpec_)
        return;
    const RunSpec current = spec();

    const std::tuple factors{current.devices, current.batch, current.accumulation};
    if (globalBatchFactors_ != factors) {
        globalBatchFactors_ = factors;
        globalBatchProblem_.clear();
        const QSignalBlocker quiet(globalBatch_);
        globalBatch_->setValue(global_batch_of(current).value_or(globalBatch_->value()));
    }

    for (const CountUnit& unit : units_)
        unit.box->setSuffix(unit.box->value() == 1 ? unit.one : unit.many);
    updateRelevantRows(current);
    updateEffectiveLr(current);
    updateDeviceWarning(current);

    problems_ = collectProblems();
    const Sweep sweep = readSweep();
    sweepProblems_ = sweep.problems;
    showProblems();

    startButton_->setEnabled(problems_.empty());
    sweepButton_->setText(
        tr("Queue sweep (%1)").arg(plural(qint64(sweep.runs()), tr("run"), tr("runs"))));
    sweepButton_->setEnabled(problems_.empty() && sweepProblems_.empty());
    sweepDevices_->setPlaceholderText(tr("form value: %1").arg(current.devices));
    sweepBatches_->setPlaceholderText(tr("form value: %1").arg(current.batch));
    sweepLrs_->setPlaceholderText(tr("form value: %1").arg(number(current.lr)));

    emit specChanged();
    if (valid_ != problems_.empty()) {
        valid_ = problems_.empty();
        emit validityChanged(valid_);
    }
}

void ExperimentForm::updateRelevantRows(const RunSpec& spec) {
    // A field that does not apply to this spec (SpecField::applies: momentum with AdamW, the
    // GPU settings on CPU devices) keeps its value but hides its row.
    for (const FieldRow& row : rows_)
        if (const SpecField* field = find_spec_field(row.name.toStdString()))
            showRow(row, field->applies_to(spec));
    const std::string default_dir = data::default_data_dir(spec.dataset);
    dataDir_->setPlaceholderText(
        default_dir.empty()
            ? tr("choose the folder with the %1 files").arg(QString::fromStdString(spec.dataset))
            : QString::fromStdString(default_dir));
}

void ExperimentForm::updateEffectiveLr(const RunSpec& spec) {
    const std::optional<int> global = global_batch_of(spec);
    const double lr = effective_lr(spec);
    if (!global || *global < 1 || spec.reference_batch < 1 || !(spec.lr > 0) ||
        !std::isfinite(lr)) {
        effectiveLr_->setText(tr("effective LR: fix the fields marked in red"));
        return;
    }
    const QString value = QString::number(lr, 'g', 4);
    const QString ratio = QStringLiteral("%1/%2").arg(*global).arg(spec.reference_batch);
    switch (spec.lr_scaling) {
        case LrScaling::None:
            effectiveLr_->setText(tr("effective LR = %1 (no scaling)").arg(value));
            break;
        case LrScaling::Linear:
            effectiveLr_->setText(
                tr("effective LR = %1 (linear: %2 × %3)").arg(value, number(spec.lr), ratio));
            break;
        case LrScaling::Sqrt:
            effectiveLr_->setText(
                tr("effective LR = %1 (sqrt: %2 × √(%3))").arg(value, number(spec.lr), ratio));
            break;
    }
}

void ExperimentForm::updateDeviceWarning(const RunSpec& spec) {
    const int cores = inventory_.cpu_cores;
    const bool cpu = spec.device == DeviceKind::Cpu && spec.devices >= 1 && spec.threads >= 0;
    // The trainer's rule (threads_per_device()): 0 gives each device cores / devices, at least 1.
    const int per_device =
        spec.threads > 0 ? spec.threads : std::max(1, cores / std::max(1, spec.devices));
    const long long threads = cpu ? (long long)(spec.devices) * per_device : 0;
    coresNote_->setVisible(cpu);
    if (cpu)
        coresNote_->setText(tr("%1 × %2 = %3 of %4")
                                .arg(plural(spec.devices, tr("device"), tr("devices")),
                                     plural(per_device, tr("thread"), tr("threads")))
                                .arg(threads)
                                .arg(plural(cores, tr("core"), tr("cores"))));
    const bool shared = threads > cores;
    deviceWarning_->setVisible(shared);
    if (shared)
        deviceWarning_->setText(tr("%1 on %2: they share cores, so throughput cannot scale")
                                    .arg(plural(threads, tr("thread"), tr("threads")),
                                         plural(cores, tr("core"), tr("cores"))));
}

void ExperimentForm::showProblems() {
    std::map<QString, QStringList> at_field;
    QStringList elsewhere;
    for (const auto* problems : {&problems_, &sweepProblems_})
        for (const Problem& problem : *problems) {
            const FieldRow* row = findRow(problem.field);
            if (row)
                at_field[problem.field].append(problem.message);
            // A hidden field (another optimizer's setting, the closed Advanced section) cannot
            // show its problem: the list above Start does.
            if (!row || !isShown(*row))
                elsewhere.append(problem.message);
        }
    for (const FieldRow& row : rows_) {
        const auto it = at_field.find(row.name);
        const QString text = it == at_field.end() ? QString() : it->second.join(QLatin1Char('\n'));
        const bool bad = !text.isEmpty();
        if (row.editor->property("problem").toBool() != bad) {
            row.editor->setProperty("problem", bad);
            row.frame->setProperty("problem", bad);
            // A dynamic property does not restyle a widget by itself.
            row.frame->style()->unpolish(row.frame);
            row.frame->style()->polish(row.frame);
        }
        row.editor->setToolTip(bad ? text : row.help);
        row.problemLabel->setText(text);
        row.problemLabel->setVisible(bad);
    }
    generalProblems_->setText(elsewhere.join(QLatin1Char('\n')));
    generalProblems_->setVisible(!elsewhere.isEmpty());
}

// ---- Config files ----

bool ExperimentForm::saveConfig(const QString& path, QString* error) const {
    std::vector<Problem> unreadable;
    const RunSpec current = readSpec(&unreadable);
    if (!globalBatchProblem_.isEmpty())
        unreadable.push_back({QStringLiteral("global_batch"), globalBatchProblem_});
    if (!unreadable.empty()) {
        report(error, tr("fix the %1 field first: %2")
                          .arg(unreadable.front().field, unreadable.front().message));
        return false;
    }
    const QByteArray json =
        QJsonDocument(experiment_to_json({.spec = current, .repeats = repeats_->value()}))
            .toJson(QJsonDocument::Indented);
    const QString reason =
        write_whole_file(path, [&](QIODevice& file) { return file.write(json) == json.size(); });
    if (!reason.isEmpty()) {
        report(error, tr("cannot write %1: %2").arg(path, reason));
        return false;
    }
    return true;
}

bool ExperimentForm::loadConfig(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        report(error, tr("cannot read %1: %2").arg(path, file.errorString()));
        return false;
    }
    Experiment loaded;
    try {
        loaded = experiment_from_json(file.readAll());
    } catch (const Error& e) {
        report(error, tr("%1: %2").arg(path, QString::fromStdString(e.what())));
        return false;
    }
    setRepeats(loaded.repeats);
    setSpec(loaded.spec);
    return true;
}

}  // namespace scalelab
