#pragma once

#include <QDialog>
#include <QString>

class QButtonGroup;
class QComboBox;
class QDialogButtonBox;
class QLineEdit;

namespace scalelab {

// What to export and where: charts as images, or the shown runs' data.
struct ExportRequest {
    enum class Content { AllCharts, OneChart, MetricsCsv, RunsJson };
    enum class ImageFormat { Png, Svg };

    Content content = Content::AllCharts;
    int chart = 0;  // a ChartKind, for Content::OneChart
    ImageFormat format = ImageFormat::Png;
    int scale = 1;  // PNG pixels per chart point: 1 or 2
    QString path;
};

// Asks for an ExportRequest: what (the chart grid, one chart, the metrics as CSV, the runs with
// their configurations as JSON), the image format and scale, and the file. The file's suffix
// follows the chosen format.
class ExportDialog : public QDialog {
    Q_OBJECT

  public:
    ExportDialog(const QStringList& chartTitles, const QString& folder, QWidget* parent = nullptr);

    ExportRequest request() const;

  private:
    void updateControls();
    QString suffix() const;

    QButtonGroup* content_ = nullptr;
    QComboBox* chart_ = nullptr;
    QComboBox* format_ = nullptr;
    QLineEdit* path_ = nullptr;
    QDialogButtonBox* buttons_ = nullptr;
};

}  // namespace scalelab
