#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include <vector>

#include "legend_layout.h"

namespace scalelab {

// The one legend the charts of a grid share where theirs would not fit them: a sample of each
// run's colour and its name, in rows as wide as the widget, as many as the names need. A name
// longer than a third of a row is elided; resting the pointer on it shows it whole.
class ChartLegend : public QWidget {
    Q_OBJECT

  public:
    struct Entry {
        QString name;
        QColor colour;

        bool operator==(const Entry&) const = default;
    };

    explicit ChartLegend(QWidget* parent = nullptr);

    // The runs listed, in order.
    void setEntries(std::vector<Entry> entries);
    const std::vector<Entry>& entries() const { return entries_; }
    // Scales the font from the application's (presenter mode).
    void setFontScale(qreal scale);
    // Each entry's name as drawn at the widget's width: whole or elided.
    std::vector<QString> shownNames() const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

  private:
    // Where each entry goes at `width`, its name as shown there, and the height that takes.
    struct Layout {
        std::vector<LegendSlot> places;  // by entry
        std::vector<QString> shown;      // by entry
        qreal height = 0;
    };
    Layout layOut(qreal width) const;

    std::vector<Entry> entries_;
};

}  // namespace scalelab
