#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <vector>

#include "run_store.h"

namespace scalelab {

// Reads an exchange file (run_exchange.h) as a stream of JSON events and adds its runs to the
// store through `insertion` as they come: each run's fields are checked when its object ends,
// its metric rows are checked and written a chunk at a time, so a file of any size is read in
// little memory. Throws ExchangeError at the first problem (the caller's transaction then adds
// nothing); returns the new ids in file order.
//
// Checked: the format ("format" before "runs") and version, every field's type and range, the
// config (run_spec_from_json), names and tags (run_labels.h), the info against the config, the
// metric names, every row ([step, epoch, wall_time_s, value]; steps increasing, epochs not
// decreasing), keys given twice in any object, and nesting deeper than anything the format has.
std::vector<std::int64_t> read_exchange_file(const QString& path, RunStore::Insertion& insertion);
std::vector<std::int64_t> read_exchange(const QByteArray& document, RunStore::Insertion& insertion);

}  // namespace scalelab
