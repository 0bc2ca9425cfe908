#pragma once

#include <QApplication>
#include <QTimer>

#include <functional>

#include "backend/device_inventory.h"
#include "main_window.h"
#include "run_collection.h"
#include "run_controller.h"

namespace scalelab::testing {

// A machine with two cores and no GPU, whatever the test runs on.
inline DeviceInventory two_cpu_cores() {
    DeviceInventory devices;
    devices.cpu_cores = 2;
    devices.no_gpu_reason = "no GPU in this test";
    return devices;
}

// The window as main() builds it, on two cores and without a run store: what window tests
// start from. Members are destroyed in reverse: the window, then the runs, then the
// controller, which joins its thread.
struct WindowUnderTest {
    RunController controller;
    RunCollection runs{controller};
    MainWindow window{runs, two_cpu_cores()};
};

// Runs `act` on the next modal dialog of type Dialog once it is shown (a QMessageBox asking,
// a QDialog of the window's), so that a test can answer what a user would.
template <typename Dialog>
void on_next_dialog(std::function<void(Dialog&)> act) {
    QTimer::singleShot(10, [act] {
        auto* dialog = qobject_cast<Dialog*>(QApplication::activeModalWidget());
        if (dialog == nullptr) {
            on_next_dialog<Dialog>(act);
            return;
        }
        act(*dialog);
    });
}

}  // namespace scalelab::testing
