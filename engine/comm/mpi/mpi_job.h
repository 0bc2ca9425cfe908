#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace scalelab::comm {

// What the process groups of one MPI job share (a group and its duplicates, mpi_processes.cpp):
// MPI itself (initialised here, finalised when the last group is gone), the hosts, the abort,
// and the roll call.
//
// The roll call names the processes that are gone. Every process runs a thread that answers a
// question on the roll-call communicator at any time, whatever its other threads do; a process
// whose collective has waited too long asks every other process and names those that do not
// answer within a window: they died, were killed or lost their connection. A process that
// answers but never joins the collective (a hang, a different experiment) cannot be told apart
// from a slow one before the timeout.
class MpiJob {
  public:
    // MPI_Init_thread (MPI_THREAD_MULTIPLE), errors returned, the hosts gathered (collective),
    // the answering thread started. Throws std::runtime_error with MPI's words.
    MpiJob();
    // Stops the answering thread; finalises MPI unless a collective broke (then MPI_Finalize
    // could wait for it for ever: the process ends without it, and the launcher ends the
    // others).
    ~MpiJob();
    MpiJob(const MpiJob&) = delete;
    MpiJob& operator=(const MpiJob&) = delete;

    int index() const { return index_; }
    int count() const { return count_; }
    const std::string& host(int process) const { return hosts_[std::size_t(process)]; }
    // "process 1 (host node17)"
    std::string who(int process) const;
    // "process 1 of 2 (host node17)": who says what went wrong.
    std::string who_am_i() const;

    // Any thread; the first reason is kept.
    void abort(const std::string& reason);
    std::optional<std::string> abort_reason();

    bool broken() const { return broken_.load(); }
    // A collective was left with messages in flight (an error, a timeout, an abort): their
    // buffers go when the caller unwinds, and any later call into MPI could progress those
    // messages into freed memory. So from here on this process makes no MPI call: once this
    // returns, no thread is inside one (it waits for those that are) and hold_mpi gives no
    // hold; the answering thread has ended, the roll call answers from what it knew, and MPI is
    // not finalised. Call it before throwing out of a collective.
    void mark_broken();
    // Permission for one MPI call (or a few, back to back): every call after construction is
    // made while one lives. None once the job is broken.
    using MpiHold = std::shared_lock<std::shared_mutex>;
    std::optional<MpiHold> hold_mpi();
    // Throws std::runtime_error naming this process, `call` and MPI's words unless `code` is
    // MPI_SUCCESS (and marks the job broken).
    void check(int code, const char* call);

    // The other processes that do not answer the roll call within `window`. Once a process
    // has been found silent the answer is kept (the dead stay dead); a roll call that everyone
    // answered may be repeated later. One roll call at a time (callers wait for each other).
    // After mark_broken, the last answer, without asking.
    std::vector<int> silent_processes(std::chrono::milliseconds window);

  private:
    void gather_hosts();
    // ask and answered: under a hold (silent_processes takes it).
    void ask(int process, MPI_Request& answer);
    bool answered(int process, MPI_Request& answer);
    void answer_roll_calls();  // the answering thread
    // Answers the question that has come, if one has, and listens for the next; false when MPI
    // may not or cannot be called.
    bool answer_one(MPI_Request& question, bool& listening);

    int index_ = 0;
    int count_ = 1;
    std::vector<std::string> hosts_;  // by process

    std::atomic<bool> broken_{false};  // a collective failed or timed out: MPI is not finalised
    std::shared_mutex calls_mutex_;    // shared by each MPI call, taken whole by mark_broken
    std::atomic<bool> aborted_{false};
    std::mutex abort_mutex_;
    std::string abort_reason_;  // the first abort's

    MPI_Comm roll_call_ = MPI_COMM_NULL;
    std::mutex roll_call_mutex_;  // one roll call at a time; guards round_, answers_, silent_
    int round_ = 0;
    std::vector<int> answers_;  // by process: the round its last answer echoed
    std::vector<int> silent_;
    int question_ = 0;  // the answering thread's buffers
    int echo_ = 0;
    std::atomic<bool> stop_answering_{false};
    std::mutex answering_mutex_;  // joins the answering thread once
    std::thread answering_;
};

}  // namespace scalelab::comm
