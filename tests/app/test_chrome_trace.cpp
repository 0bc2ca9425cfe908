// The Chrome trace export: one process per device, each step's phases laid end to end on its
// compute thread and each bucket's all-reduce on its all-reduce thread, never overlapping.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "chrome_trace.h"
#include "run_collection.h"
#include "short_runs.h"
#include "time_breakdown.h"

using scalelab::all_step_phases;
using scalelab::BucketSpan;
using scalelab::chrome_trace;
using scalelab::DeviceStepTimes;
using scalelab::phase_seconds;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunState;
using scalelab::StepPhase;
using scalelab::StepTiming;
using scalelab::write_chrome_trace;

namespace {

constexpr int prepared_steps = 4;
constexpr int prepared_devices = 3;
constexpr int prepared_buckets = 3;

// Four steps of 100 ms on three devices with three buckets, as a run reports them: each
// device's phases add up to less than the step, its all-reduces lie in backward and exposed
// communication. Device 2 has no exposed communication (its all-reduces were all hidden).
RunRecord prepared_run() {
    RunRecord run;
    run.started = true;
    run.state = RunState::Finished;
    for (int s = 1; s <= prepared_steps; ++s) {
        StepTiming timing{s, 0.1 * (s - 1), 0.1, {}};
        for (int r = 0; r < prepared_devices; ++r) {
            DeviceStepTimes t{
                0.010, 0.020 + 0.001 * r, 0.030, r == 2 ? 0.0 : 0.005, 0.010 - 0.001 * r, 0.010,
                {}};
            const double backward_start = t.data + t.forward;
            for (int b = 0; b < prepared_buckets; ++b)
                t.allreduce.push_back(BucketSpan{backward_start + 0.01 * b + 0.002,
                                                 backward_start + 0.01 * b + 0.008});
            timing.devices.push_back(t);
        }
        run.timings.push_back(timing);
    }
    return run;
}

// The trace as a reader sees it: written out and parsed back.
QJsonArray events_of(const QJsonDocument& trace) {
    const QJsonDocument parsed = QJsonDocument::fromJson(trace.toJson());
    [&] {
        QVERIFY(parsed.isObject());
        QCOMPARE(parsed.object().value("displayTimeUnit").toString(), QStringLiteral("ms"));
        QVERIFY(parsed.object().value("traceEvents").isArray());
    }();
    return parsed.object().value("traceEvents").toArray();
}

std::vector<QJsonObject> complete_events(const QJsonArray& events, int tid) {
    std::vector<QJsonObject> out;
    for (const auto& e : events)
        if (e.toObject().value("ph") == "X" && e.toObject().value("tid").toInt() == tid)
            out.push_back(e.toObject());
    return out;
}

// No two complete events of one (process, thread) overlap; `tolerance` in microseconds.
void check_no_overlap(const QJsonArray& events, double tolerance) {
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
    for (const auto& value : events) {
        const QJsonObject e = value.toObject();
        if (e.value("ph") != "X")
            continue;
        QVERIFY(e.value("dur").toDouble() >= 0);
        tracks[{e.value("pid").toInt(), e.value("tid").toInt()}].emplace_back(
            e.value("ts").toDouble(), e.value("dur").toDouble());
    }
    for (auto& [track, spans] : tracks) {
        std::sort(spans.begin(), spans.end());
        for (std::size_t i = 1; i < spans.size(); ++i)
            QVERIFY2(spans[i].first >= spans[i - 1].first + spans[i - 1].second - tolerance,
                     qPrintable(QStringLiteral("pid %1 tid %2: an event at %3 us starts before "
                                               "the one at %4 us (%5 us long) ends")
                                    .arg(track.first)
                                    .arg(track.second)
                                    .arg(spans[i].first, 0, 'f', 3)
                                    .arg(spans[i - 1].first, 0, 'f', 3)
                                    .arg(spans[i - 1].second, 0, 'f', 3)));
    }
}

std::set<qint64> steps_of(const std::vector<QJsonObject>& events) {
    std::set<qint64> steps;
    for (const auto& e : events)
        steps.insert(e.value("args").toObject().value("step").toInteger());
    return steps;
}

std::optional<StepPhase> phase_named(const QString& name) {
    for (StepPhase phase : all_step_phases)
        if (name == QString::fromUtf8(scalelab::step_phase_name(phase)))
            return phase;
    return std::nullopt;
}

bool ended(const RunCollection& runs, int id) {
    const RunRecord* run = runs.find(id);
    return run != nullptr && !scalelab::is_active(run->state);
}

}  // namespace

class TestChromeTrace : public QObject {
    Q_OBJECT

  private slots:
    void oneProcessPerDeviceWithTwoThreads() {
        const QJsonArray events = events_of(chrome_trace(prepared_run(), 1, prepared_steps));
        std::map<int, QString> processes;
        std::set<std::pair<int, int>> threads;
        for (const auto& value : events) {
            const QJsonObject e = value.toObject();
            if (e.value("name") == "process_name") {
                QVERIFY(!processes.count(e.value("pid").toInt()));
                processes[e.value("pid").toInt()] =
                    e.value("args").toObject().value("name").toString();
            }
            if (e.value("name") == "thread_name")
                threads.insert({e.value("pid").toInt(), e.value("tid").toInt()});
        }
        QCOMPARE(processes.size(), std::size_t(prepared_devices));
        for (int r = 0; r < prepared_devices; ++r) {
            QCOMPARE(processes[r], QStringLiteral("device %1").arg(r));
            QVERIFY(threads.count({r, 0}) && threads.count({r, 1}));
        }
    }

    void phasesAreLaidEndToEndAsMeasured() {
        const RunRecord run = prepared_run();
        const QJsonArray events = events_of(chrome_trace(run, 1, prepared_steps));
        check_no_overlap(events, 0);
        const auto compute = complete_events(events, 0);
        // Six phases per device and step, less device 2's empty exposed communication.
        QCOMPARE(int(compute.size()), prepared_steps * (prepared_devices * 6 - 1));
        for (const QJsonObject& e : compute) {
            const auto phase = phase_named(e.value("name").toString());
            QVERIFY2(phase.has_value(), qPrintable(e.value("name").toString()));
            const auto step = e.value("args").toObject().value("step").toInteger();
            const StepTiming& timing = run.timings[std::size_t(step - 1)];
            const DeviceStepTimes& t = timing.devices[std::size_t(e.value("pid").toInt())];
            QCOMPARE(e.value("dur").toDouble(), phase_seconds(t, *phase) * 1e6);
            // Inside its step: the phases add up to less than the step's wall time.
            QVERIFY(e.value("ts").toDouble() >= timing.start * 1e6);
            QVERIFY(e.value("ts").toDouble() + e.value("dur").toDouble() <=
                    (timing.start + timing.seconds) * 1e6);
        }
        // Each step starts with its data on every device.
        for (const QJsonObject& e : compute)
            if (e.value("name") == "data") {
                const auto step = e.value("args").toObject().value("step").toInteger();
                QCOMPARE(e.value("ts").toDouble(), run.timings[std::size_t(step - 1)].start * 1e6);
            }
    }

    void everyBucketsAllReduceIsDrawnWhereItRan() {
        const RunRecord run = prepared_run();
        const auto buckets = complete_events(events_of(chrome_trace(run, 1, prepared_steps)), 1);
        QCOMPARE(int(buckets.size()), prepared_steps * prepared_devices * prepared_buckets);
        for (const QJsonObject& e : buckets) {
            const QJsonObject args = e.value("args").toObject();
            const auto bucket = args.value("bucket").toInteger();
            QCOMPARE(e.value("name").toString(), QStringLiteral("bucket %1").arg(bucket));
            const StepTiming& timing = run.timings[std::size_t(args.value("step").toInteger() - 1)];
            const BucketSpan& span =
                timing.devices[std::size_t(e.value("pid").toInt())].allreduce[std::size_t(bucket)];
            QCOMPARE(e.value("ts").toDouble(), (timing.start + span.start) * 1e6);
            QCOMPARE(e.value("dur").toDouble(), (span.end - span.start) * 1e6);
        }
    }

    void aDeviceThatOverrunsTheStepStartsItsNextOneLater() {
        // Device 1 times its own step, from its own arrival at the previous step's end: its
        // first step takes 5 ms more than rank 0's wall time.
        RunRecord run = prepared_run();
        run.timings[0].devices[1].wait = 0.020 + 0.030;
        const QJsonArray events = events_of(chrome_trace(run, 1, prepared_steps));
        check_no_overlap(events, 0);
        int checked = 0;
        for (const QJsonObject& e : complete_events(events, 0)) {
            if (e.value("pid").toInt() != 1)
                continue;
            const auto step = e.value("args").toObject().value("step").toInteger();
            if (step == 1 && e.value("name") == "waiting") {
                QCOMPARE(e.value("dur").toDouble(), 0.05 * 1e6);  // kept as measured
                ++checked;
            }
            if (step == 2 && e.value("name") == "data") {  // where step 1 ended: 126 ms
                QCOMPARE(e.value("ts").toDouble(), 0.126 * 1e6);
                ++checked;
            }
        }
        QCOMPARE(checked, 2);
    }

    void aWindowKeepsItsStepsOnly() {
        const RunRecord run = prepared_run();
        const QJsonArray events = events_of(chrome_trace(run, 2, 3));
        QCOMPARE(steps_of(complete_events(events, 0)), (std::set<qint64>{2, 3}));
        QCOMPARE(int(complete_events(events, 1).size()), 2 * prepared_devices * prepared_buckets);
        QCOMPARE(steps_of(complete_events(events_of(chrome_trace(run, 3, 99)), 1)),
                 (std::set<qint64>{3, 4}));
        QVERIFY(events_of(chrome_trace(run, 5, 99)).isEmpty());
        QVERIFY(events_of(chrome_trace(run, 3, 2)).isEmpty());
        QVERIFY(events_of(chrome_trace(RunRecord{}, 1, 10)).isEmpty());
    }

    void writesTheTraceOrSaysWhereItCannot() {
        const RunRecord run = prepared_run();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("trace.json"));
        QString error;
        QVERIFY2(write_chrome_trace(path, run, 1, 2, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(file.readAll()), chrome_trace(run, 1, 2));

        const QString unwritable = dir.filePath(QStringLiteral("no such folder/trace.json"));
        QVERIFY(!write_chrome_trace(unwritable, run, 1, 2, &error));
        QVERIFY2(error.contains(QDir::toNativeSeparators(unwritable)), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("another folder")), qPrintable(error));
    }

    void aTwoDeviceRunTracesEveryStep() {
        RunController controller;
        RunCollection runs(controller);
        scalelab::RunSpec spec = scalelab::testing::short_synthetic_run(2);
        spec.devices = 2;
        spec.first_bucket_mb = 0.01;  // several buckets for the mlp
        spec.bucket_mb = 0.1;
        const int id = runs.start(spec, QStringLiteral("traced"));
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, id), 60000);
        const RunRecord& run = *runs.find(id);
        QVERIFY2(run.state == RunState::Finished, qPrintable(run.message));

        QCOMPARE(std::int64_t(run.timings.size()), run.total_steps());
        double start = 0;
        for (std::size_t i = 0; i < run.timings.size(); ++i) {
            const StepTiming& t = run.timings[i];
            QCOMPARE(t.step, std::int64_t(i + 1));
            QCOMPARE(t.start, start);  // the training wall time before the step
            start = run.curve(scalelab::Metric::TrainLoss)[i].seconds;
            QCOMPARE(t.start + t.seconds, start);
            QCOMPARE(t.devices.size(), std::size_t(2));
            QVERIFY(t.devices[0].allreduce.size() > 1);
            QCOMPARE(t.devices[1].allreduce.size(), t.devices[0].allreduce.size());
        }

        const QJsonArray events = events_of(chrome_trace(run, 1, run.step));
        // The times travel between devices as floats: spans measured against phases may differ
        // by their rounding, far below a microsecond.
        check_no_overlap(events, 1e-3);
        QCOMPARE(complete_events(events, 1).size(),
                 run.timings.size() * 2 * run.timings[0].devices[0].allreduce.size());
    }
};

QTEST_GUILESS_MAIN(TestChromeTrace)
#include "test_chrome_trace.moc"
