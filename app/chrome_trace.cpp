#include "chrome_trace.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>

#include <algorithm>
#include <vector>

#include "time_breakdown.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

constexpr int compute_thread = 0;
constexpr int allreduce_thread = 1;
constexpr double microseconds = 1e6;

QJsonObject metadata(const char* name, int pid, int tid, const QJsonObject& args) {
    return QJsonObject{{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", args}};
}

QJsonObject complete(const QString& name, const char* category, int pid, int tid, double ts,
                     double dur, const QJsonObject& args) {
    return QJsonObject{{"name", name}, {"cat", category}, {"ph", "X"},  {"pid", pid},
                       {"tid", tid},   {"ts", ts},        {"dur", dur}, {"args", args}};
}

// Names and orders the processes and threads of `devices` devices.
void add_metadata(QJsonArray& events, int devices) {
    for (int rank = 0; rank < devices; ++rank) {
        events.append(metadata("process_name", rank, compute_thread,
                               {{"name", QStringLiteral("device %1").arg(rank)}}));
        events.append(metadata("process_sort_index", rank, compute_thread, {{"sort_index", rank}}));
        events.append(
            metadata("thread_name", rank, compute_thread, {{"name", QStringLiteral("compute")}}));
        events.append(metadata("thread_name", rank, allreduce_thread,
                               {{"name", QStringLiteral("all-reduce")}}));
        events.append(metadata("thread_sort_index", rank, compute_thread, {{"sort_index", 0}}));
        events.append(metadata("thread_sort_index", rank, allreduce_thread, {{"sort_index", 1}}));
    }
}

}  // namespace

QJsonDocument chrome_trace(const RunRecord& run, std::int64_t first_step, std::int64_t last_step) {
    const auto window = timings_in(run.timings, first_step, last_step);
    std::size_t devices = 0;
    for (const StepTiming& t : window)
        devices = std::max(devices, t.devices.size());

    QJsonArray events;
    add_metadata(events, int(devices));
    // Where each device's compute thread is free again, in microseconds.
    std::vector<double> free_at(devices, 0.0);
    for (const StepTiming& t : window) {
        const QJsonObject step{{"step", qint64(t.step)}};
        for (std::size_t r = 0; r < t.devices.size(); ++r) {
            const DeviceStepTimes& times = t.devices[r];
            const int pid = int(r);
            const double origin = std::max(t.start * microseconds, free_at[r]);
            double at = origin;
            for (StepPhase phase : all_step_phases) {
                const double dur = phase_seconds(times, phase) * microseconds;
                if (dur <= 0)
                    continue;
                events.append(complete(QString::fromUtf8(step_phase_name(phase)), "compute", pid,
                                       compute_thread, at, dur, step));
                at += dur;
            }
            free_at[r] = at;
            for (std::size_t b = 0; b < times.allreduce.size(); ++b) {
                const BucketSpan& span = times.allreduce[b];
                events.append(complete(QStringLiteral("bucket %1").arg(b), "all-reduce", pid,
                                       allreduce_thread, origin + span.start * microseconds,
                                       (span.end - span.start) * microseconds,
                                       {{"step", qint64(t.step)}, {"bucket", qint64(b)}}));
            }
        }
    }
    return QJsonDocument(
        QJsonObject{{"traceEvents", events}, {"displayTimeUnit", QStringLiteral("ms")}});
}

bool write_chrome_trace(const QString& path, const RunRecord& run, std::int64_t first_step,
                        std::int64_t last_step, QString* error) {
    const auto fail = [&](const QString& reason) {
        if (error != nullptr)
            *error = QObject::tr("Cannot write the trace to %1: %2. Choose another folder.")
                         .arg(QDir::toNativeSeparators(path), reason);
        return false;
    };
    // Whole or not at all: a failure leaves an existing file as it was.
    const QByteArray document =
        chrome_trace(run, first_step, last_step).toJson(QJsonDocument::Compact);
    const QString reason = write_whole_file(
        path, [&](QIODevice& device) { return device.write(document) == document.size(); });
    return reason.isEmpty() || fail(reason);
}

}  // namespace scalelab
