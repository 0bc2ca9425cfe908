#pragma once

#include <QString>

#include <utility>
#include <vector>

#include "train/run_spec.h"

namespace scalelab {

// Whether a configuration summary names the device count and the global batch it gives, or
// only the batch per device (the label of runs that differ only in their device count).
enum class DeviceDetail { Included, Omitted };

// A run's configuration on one line, for tables and legends:
// "cnn · fashion-mnist · 2×128 = 256 · 1 thread per device · sgd lr 0.1 (linear → 0.2) · cosine ·
// warm-up 2 epochs" (threads for CPU devices only). With DeviceDetail::Omitted: "cnn ·
// fashion-mnist · 128 per device · 1 thread per device · sgd lr 0.1 (linear) · ...".
QString configuration_summary(const RunSpec& spec, DeviceDetail devices = DeviceDetail::Included);

// The settings of `spec` that differ from those of `reference`, as (key, value) pairs keyed as in
// the JSON config file, in the file's order.
std::vector<std::pair<QString, QString>> differing_settings(const RunSpec& spec,
                                                            const RunSpec& reference);

// The settings of `spec` that differ from RunSpec's defaults, one "key: value" line each, keyed
// as in the JSON config file; empty when every setting is the default.
QString non_default_settings(const RunSpec& spec);

// "12,078": a count or rate rounded to a whole number, with thousands separated, as tool tips and
// verdicts show images/s.
QString whole_number_text(double value);

// "1:23", or "1:02:03" from an hour on: a duration the way a progress line shows it.
QString duration_text(double seconds);

}  // namespace scalelab
