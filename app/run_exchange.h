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
//   {"format": "scalelab-runs", "version": 2, "runs": [{
//     "name": "...", "tags": ["..."], "state": "finished", "message": "",
//     "group": "...",                   // RunRecord::group, "" for none (from version 2)
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
// Dates are ISO 8601 in UTC. An import gives each group of the file a new id (so that it never
// joins a group already in the store, nor the same file imported before), and refuses a group
// whose runs differ in more than their seed, naming the field.

inline constexpr const char* exchange_format = "scalelab-runs";
inline constexpr int exchange_version = 2;
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

// Writes export_runs() to `path` a row at a time (runs of any length in little memory),
// replacing the file only once everything is written. False with `error` naming the file and
// the reason when the file cannot be written; StoreError as above.
bool save_exchange(const RunStore& store, const std::vector<std::int64_t>& ids, const QString& path,
                   QString* error);

// Adds every run of an exchange file to `store` as a new run (new ids; nothing is overwritten)
// and returns their ids in file order. The file is read as a stream (exchange_reader.h: what is
// checked) inside one transaction, taken first: a file with any problem throws ExchangeError
// naming the run, the field and the row, and adds none of its runs; so does a StoreError. A run
// exported while it was queued or running is imported as interrupted: no process here will
// finish it.
std::vector<std::int64_t> import_runs_file(RunStore& store, const QString& path);
// The same for a file already in memory.
std::vector<std::int64_t> import_runs(RunStore& store, const QByteArray& document);
// Every run of the run store at `other` (a store file copied back from a cluster), added to
// `store` as with an exchange file: each run is written out as one and read back in, through the
// same checks, in one transaction. `other` is opened read-only and checked first (StoreError for
// a damaged one); the same file as `store` is refused with ExchangeError.
std::vector<std::int64_t> import_runs_from_store(RunStore& store, const QString& other);

// Whatever runs file `path` is, added to `store`: a run store file (import_runs_from_store), a
// metrics file (exchange_from_metrics_file, the run named after the file), or an exchange file
// (import_runs_file). ExchangeError and StoreError as those.
std::vector<std::int64_t> import_any_runs_file(RunStore& store, const QString& path);

// Whether the file at `path` is an SQLite file (its 16-byte header), so a run store, rather than
// an exchange file.
bool is_sqlite_file(const QString& path);

// The metrics of the runs `ids` of `store` as the long CSV of metrics_export.h. Throws
// StoreError as export_runs does; false with `error` when the file cannot be written.
bool save_stored_metrics_csv(const RunStore& store, const std::vector<std::int64_t>& ids,
                             const QString& path, QString* error);

}  // namespace scalelab
