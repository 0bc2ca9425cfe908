#pragma once

#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "run_record.h"
#include "train/run_spec.h"

class QCoreApplication;

namespace scalelab {

class RunStore;

// The soak (issue 9): a queue of short runs trained one after another in one process, by the
// CLI's training path (scalelab-soak) and by the window (scalelab-ui-soak). Every run must end
// as planned and be in the store, and the process must not grow: its resident memory after the
// last run within soak_growth_limit_percent of that after the tenth.

// One run of the soak and how it must end.
struct SoakRun {
    RunSpec spec;
    RunState expected = RunState::Finished;  // Finished, Diverged or Cancelled
    // Cancelled runs: the soak stops the run once this step is reported (0 for the others).
    // Such a run is planned far longer than the others, so that it ends only when stopped.
    std::int64_t cancel_at_step = 0;
};

// `runs` runs of an mlp on a few hundred synthetic images, one thread per device, a fraction of
// a second each; device counts cycle through 1, 2, 3 and 4. In every whole block of ten, one
// run diverges (a learning rate of 1e6) and another is cancelled; which ones, and the step at
// which it is cancelled, are drawn from `seed`. The same arguments give the same plan.
std::vector<SoakRun> soak_plan(int runs, std::uint64_t seed);

// What is wrong with the store the plan's runs were recorded into, each problem a sentence: it
// must list exactly these runs in this order, each in its expected state with the devices
// planned, and hold one train-loss row for every step its summary says it took (the whole run
// when finished, at least up to the step it was stopped at when cancelled) and, when finished,
// one validation-accuracy row per epoch. Empty: all is well.
std::vector<QString> soak_store_problems(const RunStore& store, const std::vector<SoakRun>& plan);

// This process's resident memory now, in bytes (Linux: /proc/self/statm); 0 where unknown.
std::size_t resident_bytes();
// The bytes the process has allocated and not freed (glibc: mallinfo2, every arena and mmapped
// block); 0 where unknown. Unlike resident memory it does not count what the allocator keeps.
std::size_t heap_in_use_bytes();

inline constexpr double soak_growth_limit_percent = 10.0;
inline constexpr int soak_reference_run = 10;  // memory grows from after this run to the last

// How memory (resident, or heap in use) grew from after run soak_reference_run to after the
// last run, in per cent of the former; nothing with fewer runs than that plus one.
std::optional<double> memory_growth_percent(const std::vector<std::size_t>& after_each_run);

// The soak's exit codes, for scripts and tests.
enum SoakExit : int {
    soak_passed = 0,
    soak_wrong_runs = 1,     // a run ended otherwise than planned, or the store is wrong
    soak_bad_input = 2,      // an option to fix; nothing was run
    soak_memory_growth = 3,  // every run right, but memory grew beyond the limit
};

// What the soak's command line asks for.
struct SoakOptions {
    int runs = 100;
    std::uint64_t seed = 1;
    QString store;  // a new file to record into; empty: a temporary one, removed at the end
};

// Reads --runs, --seed and --store (and answers --help). When an option is wrong, prints
// what to change and returns nothing; a --store file that exists is wrong: the soak needs a new
// store.
std::optional<SoakOptions> parse_soak_options(const QCoreApplication& app,
                                              const QString& description);

// What one soak found.
struct SoakOutcome {
    double wall_seconds = 0;
    // Resident memory and heap in use after each run ended, in the order the runs ended.
    std::vector<std::size_t> resident_after;
    std::vector<std::size_t> heap_after;
    std::vector<QString> problems;  // runs that ended wrongly, store problems
};

// Measures memory once a run has ended: appends to resident_after and heap_after.
void record_memory(SoakOutcome& outcome);

// Prints the figures (runs, wall time, resident memory and heap in use after the reference and
// the last run, their growth) and the problems, then PASS or FAIL; returns the SoakExit code.
// The verdict on memory is the resident growth's, as issue 9 asks.
int report_soak(const SoakOutcome& outcome, std::FILE* out);

}  // namespace scalelab
