#pragma once

#include <QJsonDocument>
#include <QString>
#include <QTextStream>

#include <cstdint>
#include <functional>
#include <vector>

#include "run_collection.h"

namespace scalelab {

// Exports of runs for reports and notebooks. Both write every point of every curve (the charts
// decimate what they draw; exports never do). Runs are written in the order of `ids`; ids
// without a run are skipped.

// The CSV header write_metrics_csv starts with.
inline constexpr const char* metrics_csv_header =
    "run,run_id,group,step,epoch,wall_time_s,metric,value";

// Long format, one row per point: run name (quoted when it holds a comma, quote or line break),
// run id, group (RunRecord::group: the repeats it is one of; empty when none), step, epoch,
// training wall time in seconds, metric name (metric_name()), value. Numbers are written in the
// shortest form that reads back to the same double. A group's mean and spread are not rows of
// their own: the members of a group share their steps, so grouping the rows by group, metric
// and step gives them (docs/repeats.md shows it with pandas).
void write_metrics_csv(const RunCollection& runs, const std::vector<int>& ids, QTextStream& out);
// The same for runs held elsewhere (read from the run store), in the order given.
void write_metrics_csv(const std::vector<const RunRecord*>& runs, QTextStream& out);
// One row of that CSV, for runs streamed from elsewhere; `run_field` is csv_field(name),
// `group_field` csv_field(group).
void write_metrics_csv_row(QTextStream& out, const QString& run_field, std::int64_t run_id,
                           const QString& metric, std::int64_t step, int epoch, double seconds,
                           double value, const QString& group_field);
// RFC 4180: a field holding a separator, a quote or a line break goes between quotes, with its
// quotes doubled.
QString csv_field(const QString& text);

// {"runs": [...]}, one object per run: id, name, group ("" for none), state, message, created,
// ended, config (the
// run's spec as run_spec_to_json writes it, so that it loads back as a config file), info (null
// before the run started), summary (best val accuracy, time to target, mean images/s, scaling
// efficiency; null where there is none) and metrics: metric name -> [[step, epoch, wall_time_s,
// value], ...]. Values that are not finite (a diverged loss) are written as null.
QJsonDocument runs_to_json(const RunCollection& runs, const std::vector<int>& ids);

// Write the above to `path`, replacing it only once everything is written (QSaveFile). False
// with `error` naming the file and the reason when it cannot be written.
bool save_metrics_csv(const RunCollection& runs, const std::vector<int>& ids, const QString& path,
                      QString* error);
bool save_runs_json(const RunCollection& runs, const std::vector<int>& ids, const QString& path,
                    QString* error);
// Writes what `write` writes to `path` as save_metrics_csv does.
bool save_text_file(const QString& path, QString* error,
                    const std::function<void(QTextStream&)>& write);

}  // namespace scalelab
