#pragma once

// Runs that really train, kept short: the tests of the run controller, the run collection and
// the main window start them on synthetic data, so that no dataset has to be on the machine.

#include "train/run_spec.h"

namespace scalelab::testing {

// An mlp on 256 synthetic training and 64 test images in batches of 32 on one device and one
// thread: 8 steps an epoch, a second or less in all. No accuracy targets, so that the run
// trains every epoch.
inline RunSpec short_synthetic_run(int epochs = 1) {
    RunSpec spec;
    spec.model = "mlp";
    spec.dataset = "synthetic";
    spec.synthetic_train = 256;
    spec.synthetic_test = 64;
    spec.batch = 32;
    spec.epochs = epochs;
    spec.devices = 1;
    spec.threads = 1;
    spec.targets = {};
    return spec;
}

// The same on 4096 training images for 1000 epochs: far longer than any test waits for, so that
// a test can stop, remove or queue behind a run that is still training.
inline RunSpec endless_synthetic_run() {
    RunSpec spec = short_synthetic_run();
    spec.synthetic_train = 4096;
    spec.epochs = 1000;
    return spec;
}

}  // namespace scalelab::testing
