#pragma once

#include <QByteArray>
#include <QString>

namespace scalelab {

// A metrics file (`scalelab-cli train --metrics-out`, or an exported PyTorch script's) as an
// exchange document (run_exchange.h), so that it imports through the same checks as a
// .scalelab.json file: the experiment from the start row's "experiment" (its JSON config), the
// run's devices and batch from the rest of that row, the curves from the step rows (train_loss,
// train_accuracy, lr, images_per_s, noise_scale where known, at the sum of the step times so
// far) and the epoch rows (val_loss, val_accuracy), the state, message and targets from the end
// row (a file without one: interrupted). The run is named `name` and tagged with the start
// row's "engine" when there is one ("pytorch"). Throws ExchangeError naming the line and what is
// wrong with it.
QByteArray exchange_from_metrics_file(const QString& path, const QString& name);

// Whether the file at `path` starts like a metrics file: a first line that is a JSON object of
// "type" "start".
bool is_metrics_file(const QString& path);

}  // namespace scalelab
