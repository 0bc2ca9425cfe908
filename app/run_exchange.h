#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "run_store.h"

namespace scalelab {

// The portable file of one or more stored runs (`.scalelab.json`), for moving runs between
// stores and machines:
//
//   {"format": "scalelab-runs", "version": 1, "runs": [{
//     "name": "...", "tags": ["..."], "state": "finished", "message": "",
//     "config": {...},                  // run_spec_to_json: loads back as a --config file
//     "info": {...} | null,             // RunInfo; null for a run that never started
//     "machine": "...",
//     "created": "2026-11-30T11:07:03.120Z", "started": ... | null, "ended": ... | null,
//     "summary": {"steps", "epochs", "train_seconds", "best_val_accuracy",
//                 "mean_images_per_s", "targets": [{"target", "seconds", "step", "epoch",
//                 "images"}], "other_programs_share" (optional: share of the cores other
//                 programs used during the run)},
//     "metrics": {"train_loss": [[step, epoch, wall_time_s, value], ...], ...}}]}
//
// Every row of every curve is written; values that are not finite (a diverged loss) are null.
// Dates are ISO 8601 in UTC.

inline constexpr const char* exchange_format = "scalelab-runs";
inline constexpr int exchange_version = 1;
inline constexpr const char* exchange_suffix = ".scalelab.json";

// A file that is not a valid exchange file. The message names the run (its index from 1 and
// its name), the field and what is wrong; JSON syntax errors give the line and column.
class ExchangeError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The runs `ids` of `store`, in that order, as an exchange file. Throws StoreError (NotFound for
// an id that is not in the store).
QByteArray export_runs(const RunStore& store, const std::vector<std::int64_t>& ids);

// Writes export_runs() to `path`, replacing the file only once everything is written. False with
// `error` naming the file and the reason when the file cannot be written; StoreError as above.
bool save_exchange(const RunStore& store, const std::vector<std::int64_t>& ids, const QString& path,
                   QString* error);

// Reads and checks a whole exchange file before anything is used: the format and version, every
// field's type, the state, the dates, the config (run_spec_from_json), the metric names, and
// every metric row (four numbers, or a null value; steps increasing, epochs not decreasing).
// Throws ExchangeError at the first problem. The runs' ids are 0: the store gives new ones.
std::vector<RunWithMetrics> parse_exchange(const QByteArray& document);

// Adds every run of the file to `store` as a new run (new ids; nothing is overwritten) and
// returns their ids in file order. All or nothing: a file with any problem throws ExchangeError
// before the store is touched, and the runs are added in one transaction (a StoreError adds
// none). A run exported while it was queued or running is imported as
// interrupted: no process here will finish it.
std::vector<std::int64_t> import_runs(RunStore& store, const QByteArray& document);

// The metrics of the runs `ids` of `store` as the long CSV of metrics_export.h. Throws
// StoreError as export_runs does; false with `error` when the file cannot be written.
bool save_stored_metrics_csv(const RunStore& store, const std::vector<std::int64_t>& ids,
                             const QString& path, QString* error);

}  // namespace scalelab
