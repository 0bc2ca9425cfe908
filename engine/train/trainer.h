#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/process_group.h"

#include "data/dataset.h"
#include "train/device_group.h"
#include "train/metrics.h"
#include "train/run_spec.h"

namespace scalelab {

// Trains one run on spec.devices devices: CPU devices (one worker thread each with spec.threads
// cores, 0: its share of the machine) or GPUs (one host thread each), with DDP semantics (see
// DeviceWorker), and reports through a sink from rank 0's thread. The caller loads the data first
// (data::load_dataset), so that a missing or corrupt dataset is reported before a run starts.
//
// How a run ends: a worker that throws ends the whole run as Failed with that worker's rank and
// message; the other workers are released by aborting the communicator, and every thread is
// joined before run() returns. cancel() makes the next step of any worker abort the group. A
// communicator aborted by anyone else (a watchdog that gave up on a collective) ends the run as
// Failed with "communication aborted: " and the abort's reason.
class Trainer {
  public:
    // Throws Error(InvalidSpec) listing every problem when the spec does not validate, and when
    // the data does not fit the model (channels, image size not divisible by 4).
    Trainer(RunSpec spec, const data::TrainTest& data, MetricsSink& sink);

    // Runs to the end and returns how it ended (also reported to sink.on_end). Never throws:
    // a failure inside the run ends it as RunStatus::Failed with the error's message.
    RunEnd run();

    // Safe from any thread; the run stops before its next step and ends as Cancelled. A run
    // across processes stops at once (its collectives are aborted): each process would stop at
    // a step of its own, and a rank waiting for a process that has stopped would wait until the
    // collective timeout. There, process 0 first calls the roll (up to 0.4 s; the others wait
    // 0.6 s to answer it): when a process no longer answers, the run ends as Failed naming it.
    void cancel();

    // Fault injection for tests; set before run(). Unset (the default), each costs one test of
    // an empty std::function: once per step, and once per device and run.
    //
    // Called by every device's worker thread before each step (counted from 1); what it throws
    // ends the run as that device's failure.
    void set_step_hook(std::function<void(int rank, std::int64_t step)> hook) {
        step_hook_ = std::move(hook);
    }
    // Called by every device's worker thread with its communicator, before the run's first
    // collective, so that a test can abort it later from any thread. The communicator goes
    // when its worker ends; a test that aborts it from another thread keeps what owns it
    // (comm::ThreadComm::group()).
    void set_communicator_hook(std::function<void(int rank, comm::Communicator&)> hook) {
        communicator_hook_ = std::move(hook);
    }
    // The processes this run spans (set before run(); default: this process alone). Each
    // process trains spec.devices local devices; together they are one run of processes x
    // spec.devices ranks: the sampler, the evaluation shards, the global batch and the LR
    // scaling rule count every rank, and only global rank 0 (process 0) reports to its sink.
    void set_process_group(std::shared_ptr<comm::ProcessGroup> processes) {
        processes_ = std::move(processes);
    }

  private:
    RunEnd train();
    // The epoch loop of one rank, on its thread, with its backend and communicators: each step
    // trained, recorded and checked for a stop, each epoch evaluated, recorded and checked.
    // `run_spec` counts every process's devices; `rank` is the global rank.
    RunEnd run_device(const RunSpec& run_spec, int rank, DeviceGroup::Rank& devices_of_rank,
                      const RunInfo& info);

    // The end of a run that no rank ended itself (a failure, an abort, a cancel that released
    // the ranks): at the last step this process's first rank trained.
    RunEnd ended_early(RunStatus status, std::string message) const;

    RunSpec spec_;
    std::vector<int> gpus_;  // a GPU run's GPUs, one per rank, checked against the machine
    const data::TrainTest& data_;
    MetricsSink& sink_;
    std::atomic<bool> cancelled_{false};
    // The epoch and step this process's first rank is at (written by its thread).
    std::atomic<int> epoch_now_{0};
    std::atomic<std::int64_t> steps_done_{0};
    std::mutex gone_mutex_;
    std::string gone_;  // the processes the roll call after a cancel found gone, as text
    std::function<void(int, std::int64_t)> step_hook_;
    std::function<void(int, comm::Communicator&)> communicator_hook_;
    std::shared_ptr<comm::ProcessGroup> processes_;
};

}  // namespace scalelab
