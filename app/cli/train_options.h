#pragma once

#include <string>
#include <vector>

#include "train/run_spec.h"

namespace scalelab::cli {

// What `scalelab-cli train` was asked to do.
struct TrainOptions {
    RunSpec spec;             // the --config file (if any), then the flags on top of it
    std::string config;       // --config FILE; empty: none
    std::string metrics_out;  // JSONL file for start, step, epoch and end rows; empty: none
    // .npz file for the initial parameters and buffers (write_initial_state); empty: none
    std::string save_initial;
    // The run store the run is recorded in (--store); empty: RunStore::default_path().
    std::string store;
    bool no_store = false;          // --no-store: record nothing
    std::string name;               // --name: the run's name in the store; empty: the store's
    std::vector<std::string> tags;  // --tag, repeatable
    // --global-batch: images per step over all devices and micro-batches; 0 when not given.
    // When given, spec.batch is global_batch / (devices * accumulation).
    int global_batch = 0;
    // --repeats (or "repeats" in the --config file): runs of the spec over seeds seed ..
    // seed + repeats - 1, recorded as one group.
    int repeats = 1;
    std::string log_level = "info";
    bool help = false;
};

struct ParsedTrainOptions {
    TrainOptions options;
    std::vector<std::string> problems;  // each says what to change; empty: options are usable
};

// Reads the words after "train". Reads the --config file, so its problems (invalid JSON with
// the line, unknown keys, wrong types) come back here too. Does not call RunSpec::validate():
// the command does, after the whole spec is known.
ParsedTrainOptions parse_train_options(const std::vector<std::string>& args);

std::string train_help();

}  // namespace scalelab::cli
