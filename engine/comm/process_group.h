#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace scalelab::comm {

// The processes of one data-parallel run, each the same multi-threaded engine with its own
// local devices: P processes x D local devices make P*D ranks, global rank = process * D +
// local index (HierarchicalComm). One ProcessGroup per process; its collectives join the
// processes, as NCCL and gloo join ranks.
//
// The contract:
//  - every process calls the same collectives in the same order with the same sizes, from one
//    thread at a time (HierarchicalComm calls them from local rank 0's thread only); threads
//    that need collectives at the same time each take a duplicate();
//  - results are the same bits in every process;
//  - a collective that a process does not join within the group's timeout (it died, was
//    killed, or stopped calling) throws Aborted in the processes that wait, each naming itself,
//    its host and, where they can be told, the processes that no longer answer; no process
//    waits for ever;
//  - abort() ends this process's part at once: a collective waiting in this group or any of its
//    duplicates, or started later, throws Aborted with the reason;
//  - errors of the transport are thrown as std::runtime_error with its words, never fatal.
class ProcessGroup {
  public:
    virtual ~ProcessGroup() = default;

    virtual int index() const = 0;  // this process: 0 <= index() < count()
    virtual int count() const = 0;
    // This process's host, as the launcher knows it ("node17").
    virtual std::string host() const = 0;

    // In place: data <- the sum over processes of data.
    virtual void all_reduce_sum(std::span<float> data) = 0;
    // In place: data <- process `root`'s data.
    virtual void broadcast(std::span<float> data, int root) = 0;
    // out[p * in.size() ... (p + 1) * in.size()) <- process p's in. `in` may be out's own block
    // (process index()'s): gathered in place.
    virtual void all_gather(std::span<const float> in, std::span<float> out) = 0;
    // Every process's `text`, by process (their hosts, the settings each was started with).
    virtual std::vector<std::string> all_gather_text(const std::string& text) = 0;
    virtual void barrier() = 0;
    // Any thread, any time; the first reason is kept. The other processes learn of it when
    // their next collective times out.
    virtual void abort(const std::string& reason) = 0;
    // The other processes that do not answer within `window` ("process 1 (host b)"): they died,
    // were killed or lost their connection. Works after an abort too (a roll call of its own,
    // not a collective); empty where every process answers, and for a lone process.
    virtual std::vector<std::string> silent_processes(std::chrono::milliseconds window) = 0;

    // A group of the same processes whose collectives are apart from this one's (MPI_Comm_dup),
    // so that two threads of a process may each use their own at the same time (the gradient
    // all-reduce on one, synchronised batch norm on the other). Collective.
    virtual std::unique_ptr<ProcessGroup> duplicate() = 0;
};

// "process 1 (host b) no longer answers: it died, was killed or lost its connection", for the
// names silent_processes returned (one or more).
std::string gone_text(const std::vector<std::string>& silent);

// What process 0's make() returns, in every process (collective; only process 0 calls make):
// how one process's id (NCCL's unique id) reaches the others. Any bytes, zeros included.
std::string made_by_process_0(ProcessGroup& processes, const std::function<std::string()>& make);

// The group this process was started in: the processes an MPI launcher (mpirun, srun) started
// together, when ScaleLab is built with MPI and was started by one; otherwise this process
// alone (single_process()), exactly as a program without MPI behaves. `timeout`: how long each
// collective waits for the other processes before it gives up.
std::unique_ptr<ProcessGroup> join_launched_processes(std::chrono::milliseconds timeout);

// This process alone: index 0 of 1; its collectives return their input (Aborted after abort()).
std::unique_ptr<ProcessGroup> single_process();

}  // namespace scalelab::comm
