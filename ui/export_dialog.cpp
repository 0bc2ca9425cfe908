#include "export_dialog.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

namespace scalelab {

namespace {

// The format combo's entries, in this order.
enum FormatEntry { Png1x, Png2x, Svg };

}  // namespace

ExportDialog::ExportDialog(const QStringList& chartTitles, const QString& folder, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Export"));

    content_ = new QButtonGroup(this);
    auto* contentBox = new QVBoxLayout;
    const std::pair<ExportRequest::Content, QString> contents[] = {
        {ExportRequest::Content::AllCharts, tr("All charts (one image)")},
        {ExportRequest::Content::OneChart, tr("One chart")},
        {ExportRequest::Content::MetricsCsv, tr("Metrics of the shown runs (CSV, long format)")},
        {ExportRequest::Content::RunsJson, tr("Shown runs with their configurations (JSON)")}};
    for (const auto& [content, label] : contents) {
        auto* button = new QRadioButton(label);
        content_->addButton(button, int(content));
        contentBox->addWidget(button);
    }
    content_->button(int(ExportRequest::Content::AllCharts))->setChecked(true);

    chart_ = new QComboBox;
    chart_->addItems(chartTitles);
    format_ = new QComboBox;
    format_->addItem(tr("PNG"));
    format_->addItem(tr("PNG, 2x (high DPI, slides)"));
    format_->addItem(tr("SVG (vector)"));

    path_ = new QLineEdit(QDir(folder).filePath(QStringLiteral("scalelab-charts.png")));
    auto* browse = new QPushButton(tr("Browse..."));
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_, 1);
    pathRow->addWidget(browse);

    auto* form = new QFormLayout;
    form->addRow(tr("Export"), contentBox);
    form->addRow(tr("Chart"), chart_);
    form->addRow(tr("Format"), format_);
    form->addRow(tr("File"), pathRow);

    buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons_->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons_);

    connect(content_, &QButtonGroup::idToggled, this, [this] { updateControls(); });
    connect(format_, &QComboBox::currentIndexChanged, this, [this] { updateControls(); });
    connect(path_, &QLineEdit::textChanged, this, [this] {
        buttons_->button(QDialogButtonBox::Ok)->setEnabled(!path_->text().trimmed().isEmpty());
    });
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString chosen =
            QFileDialog::getSaveFileName(this, tr("Export to"), path_->text(),
                                         tr("%1 files (*.%2)").arg(suffix().toUpper(), suffix()));
        if (!chosen.isEmpty())
            path_->setText(chosen);
    });
    updateControls();
}

QString ExportDialog::suffix() const {
    switch (ExportRequest::Content(content_->checkedId())) {
        case ExportRequest::Content::MetricsCsv:
            return QStringLiteral("csv");
        case ExportRequest::Content::RunsJson:
            return QStringLiteral("json");
        default:
            return format_->currentIndex() == Svg ? QStringLiteral("svg") : QStringLiteral("png");
    }
}

void ExportDialog::updateControls() {
    const auto content = ExportRequest::Content(content_->checkedId());
    const bool image =
        content == ExportRequest::Content::AllCharts || content == ExportRequest::Content::OneChart;
    chart_->setEnabled(content == ExportRequest::Content::OneChart);
    format_->setEnabled(image);
    // Keep the file name, change its suffix to the chosen format's.
    const QFileInfo file(path_->text());
    if (!path_->text().isEmpty())
        path_->setText(QDir(file.path()).filePath(file.completeBaseName() + '.' + suffix()));
}

ExportRequest ExportDialog::request() const {
    ExportRequest request;
    request.content = ExportRequest::Content(content_->checkedId());
    request.chart = chart_->currentIndex();
    request.format = format_->currentIndex() == Svg ? ExportRequest::ImageFormat::Svg
                                                    : ExportRequest::ImageFormat::Png;
    request.scale = format_->currentIndex() == Png2x ? 2 : 1;
    request.path = path_->text().trimmed();
    return request;
}

}  // namespace scalelab
