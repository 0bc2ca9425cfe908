#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "comm/process_group.h"
#include "train/metrics.h"
#include "train/run_spec.h"

namespace scalelab {
class RunStore;
namespace data {
struct TrainTest;
}
}  // namespace scalelab

namespace scalelab::cli {

// `scalelab-cli train`: reads the flags (and --config), checks the spec, loads the dataset,
// trains, and returns the exit code of exit_codes.h. `args` are the words after "train".
int run_train_command(const std::vector<std::string>& args);

// How train_run left one run.
struct TrainedRun {
    int exit_code = exit_ok;    // what `scalelab-cli train` exits with for it
    std::int64_t store_id = 0;  // its row in the store; 0 when it was not recorded
};

// The second half of `scalelab-cli train`, once the spec is checked and its data loaded:
// creates the run in `store` (null: not recorded) and records it there, trains it reporting to
// `sinks` too, cancels it on Ctrl-C or when recording fails, and prints its header and where it
// was recorded. Reports any problem as the command does. A process may call it for one run
// after another (the soak benchmark does). `processes`: the processes the run spans, this one
// their process 0 (null: this process alone). `group`: the repeats the run is one of
// (RunRecord::group), empty for none.
TrainedRun train_run(const RunSpec& spec, const data::TrainTest& data,
                     std::vector<MetricsSink*> sinks, RunStore* store, const QString& name = {},
                     const QStringList& tags = {}, const QString& group = {},
                     std::shared_ptr<comm::ProcessGroup> processes = nullptr);

}  // namespace scalelab::cli
