#include "log_pane.h"

#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

#include <spdlog/common.h>

#include "theme.h"

namespace scalelab {

namespace {}  // namespace

LogPane::LogPane(QWidget* parent) : QWidget(parent) {
    level_filter_ = new QComboBox;
    level_filter_->setObjectName(QStringLiteral("levelFilter"));
    level_filter_->addItem(tr("Everything"), int(spdlog::level::trace));
    level_filter_->addItem(tr("Debug and above"), int(spdlog::level::debug));
    level_filter_->addItem(tr("Info and above"), int(spdlog::level::info));
    level_filter_->addItem(tr("Warnings and errors"), int(spdlog::level::warn));
    level_filter_->addItem(tr("Errors only"), int(spdlog::level::err));
    connect(level_filter_, &QComboBox::currentIndexChanged, this, &LogPane::refilter);

    auto* clear_button = new QToolButton;
    clear_button->setText(tr("Clear"));
    connect(clear_button, &QToolButton::clicked, this, &LogPane::clear);

    text_ = new QPlainTextEdit;
    text_->setReadOnly(true);
    text_->setUndoRedoEnabled(false);
    text_->setMaximumBlockCount(max_lines);
    text_->setLineWrapMode(QPlainTextEdit::NoWrap);
    text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    text_->setPlaceholderText(tr("Messages from the training engine appear here."));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Show:")));
    controls->addWidget(level_filter_);
    controls->addStretch();
    controls->addWidget(clear_button);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(text_);
}

int LogPane::minimumLevel() const {
    return level_filter_->currentData().toInt();
}

void LogPane::setMinimumLevel(int level) {
    const int index = level_filter_->findData(level);
    if (index >= 0)
        level_filter_->setCurrentIndex(index);
}

QString LogPane::text() const {
    return text_->toPlainText();
}

void LogPane::appendLine(int level, const QString& line) {
    lines_.push_back(Line{level, line});
    if (lines_.size() > std::size_t(max_lines))
        lines_.pop_front();
    if (level >= minimumLevel())
        appendToText(lines_.back());
}

void LogPane::clear() {
    lines_.clear();
    text_->clear();
}

void LogPane::appendToText(const Line& line) {
    // Follow new lines only while the user has not scrolled back to read.
    QScrollBar* scroll = text_->verticalScrollBar();
    const bool follow = scroll->value() == scroll->maximum();

    QTextCharFormat format;
    if (line.level >= int(spdlog::level::err)) {
        format.setForeground(problem_colour(current_theme()));
        format.setFontWeight(QFont::Bold);
    } else if (line.level == int(spdlog::level::warn)) {
        format.setForeground(warning_colour(current_theme()));
    }
    QTextCursor cursor(text_->document());
    cursor.movePosition(QTextCursor::End);
    if (!text_->document()->isEmpty())
        cursor.insertBlock();
    cursor.insertText(line.text, format);

    if (follow)
        scroll->setValue(scroll->maximum());
}

void LogPane::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange)
        refilter();
    QWidget::changeEvent(event);
}

void LogPane::refilter() {
    text_->clear();
    const int minimum = minimumLevel();
    for (const Line& line : lines_)
        if (line.level >= minimum)
            appendToText(line);
}

}  // namespace scalelab
