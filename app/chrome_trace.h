#pragma once

#include <QJsonDocument>
#include <QString>

#include <cstdint>

#include "run_record.h"

namespace scalelab {

// A run's step timings in Chrome's Trace Event Format, for chrome://tracing or Perfetto:
// {"traceEvents": [...], "displayTimeUnit": "ms"}, times in microseconds of training wall time
// (StepTiming::start's clock). One process per device (pid = rank, named "device N"), each with
// two threads: tid 0 "compute", the step's phases laid end to end, and tid 1 "all-reduce", one
// event per gradient bucket ("bucket k") where its all-reduce ran. Every event carries its step
// in args (and the bucket's index, for all-reduces).
//
// The compute thread shows each step of a device as its phases in the order data, forward,
// backward, exposed communication, waiting, optimizer, from the step's start; zero-length
// phases are left out. The device measures phases, not their order in time, so the drawing
// simplifies: a step's micro-batches are merged (all their data fetches in one "data", and so
// on), and its waits (at the previous step's end, for the other devices' step times, and before
// the optimizer, for the loss totals) are drawn as one, after exposed communication.
//
// Rank 0's step wall time (StepTiming::seconds) covers its phases; another device's phases can
// add up to a little more (it times its own step, from its own arrival at the previous step's
// end). Its next step then starts where that one ended, not at the step's start, so that a
// device's steps never overlap; every duration is kept as measured. The all-reduces are drawn
// from the same origin as the step's phases: spans are measured from the first data fetch.

// Steps first..last of the run's timings as a Chrome trace; an empty traceEvents list when none
// fall in the window.
QJsonDocument chrome_trace(const RunRecord& run, std::int64_t first_step, std::int64_t last_step);

// Writes it to `path`; false with *error saying what went wrong (file not writable: name it and
// say to choose another folder) otherwise.
bool write_chrome_trace(const QString& path, const RunRecord& run, std::int64_t first_step,
                        std::int64_t last_step, QString* error);

}  // namespace scalelab
