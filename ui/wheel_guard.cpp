#include "wheel_guard.h"

#include <QEvent>
#include <QWidget>

void WheelGuard::install(QWidget* editor) {
    editor->setFocusPolicy(Qt::StrongFocus);  // not Qt::WheelFocus: the wheel gives no focus
    editor->installEventFilter(new WheelGuard(editor));
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::Wheel || static_cast<QWidget*>(watched)->hasFocus())
        return false;
    // Unaccepted, a wheel event travels on to the parent widgets: the scroll area scrolls.
    event->ignore();
    return true;
}
