#pragma once

#include <QObject>

class QWidget;

// Keeps the mouse wheel from changing a value the user only scrolls past. A spin box or combo
// box takes wheel events from the moment the pointer is over it, and a long form scrolled with
// the pointer on it would silently change whichever field passes under the pointer. A guarded
// editor takes the wheel only once it has the focus (a click or Tab gives it, the wheel does
// not), and otherwise passes it on to the widgets around it, so that the form scrolls.
class WheelGuard : public QObject {
    Q_OBJECT

  public:
    // Guards `editor`; the guard is the editor's child and goes with it.
    static void install(QWidget* editor);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    explicit WheelGuard(QObject* parent) : QObject(parent) {}
};
