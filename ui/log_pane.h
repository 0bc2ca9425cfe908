#pragma once

#include <QWidget>

#include <deque>

class QComboBox;
class QPlainTextEdit;

namespace scalelab {

// The engine's log lines (from a LogRelay: connect its lineLogged to appendLine), newest at the
// bottom, warnings and errors coloured, with a filter for the least severe level shown. Keeps
// the last max_lines lines.
class LogPane : public QWidget {
    Q_OBJECT

  public:
    static constexpr int max_lines = 5000;

    explicit LogPane(QWidget* parent = nullptr);

    // The least severe spdlog level shown (spdlog::level::level_enum as int).
    int minimumLevel() const;
    void setMinimumLevel(int level);
    // The text shown, one line per log line.
    QString text() const;

  public slots:
    // `level` is an spdlog::level::level_enum as LogRelay::lineLogged gives it.
    void appendLine(int level, const QString& line);
    void clear();

  protected:
    // Writes the lines again in a new theme's colours.
    void changeEvent(QEvent* event) override;

  private:
    struct Line {
        int level = 0;
        QString text;
    };

    void appendToText(const Line& line);
    void refilter();

    QComboBox* level_filter_ = nullptr;
    QPlainTextEdit* text_ = nullptr;
    std::deque<Line> lines_;  // every line kept, shown or not, for a change of filter
};

}  // namespace scalelab
