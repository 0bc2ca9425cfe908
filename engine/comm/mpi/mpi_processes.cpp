// The processes an MPI launcher started together, joined over MPI (Open MPI from Debian).
// engine/comm/mpi/ is the one folder of the engine that includes mpi.h; cmake/scalelab_mpi.cmake
// builds it where MPI was found.

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/mpi/mpi_job.h"
#include "comm/process_group.h"

namespace scalelab::comm {

namespace {

// mpirun (Open MPI) and srun (Slurm, PMI or PMIx) set these in every process they start.
bool launched_by_mpi() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (std::getenv(name) != nullptr)
            return true;
    return false;
}

// How long wait() polls a collective back to back before it sleeps between polls: longer than
// a 64 MB all-reduce between two processes of one machine takes (28 ms measured).
constexpr auto busy_polling = std::chrono::milliseconds(100);

// MPI counts are ints: larger buffers go in pieces of at most 2^30 elements.
constexpr std::size_t max_piece = std::size_t(1) << 30;

class MpiProcesses final : public ProcessGroup {
  public:
    // A group over its own duplicate of `parent`.
    MpiProcesses(std::shared_ptr<MpiJob> job, MPI_Comm parent, std::chrono::milliseconds timeout)
        : job_(std::move(job)), timeout_(timeout) {
        job_->check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
        job_->check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    }

    ~MpiProcesses() override {
        if (!job_->broken())
            MPI_Comm_free(&comm_);
    }

    std::unique_ptr<ProcessGroup> duplicate() override {
        return std::make_unique<MpiProcesses>(job_, comm_, timeout_);
    }

    int index() const override { return job_->index(); }
    int count() const override { return job_->count(); }
    std::string host() const override { return job_->host(job_->index()); }

    void all_reduce_sum(std::span<float> data) override {
        for (std::size_t at = 0; at < data.size(); at += max_piece) {
            const int n = int(std::min(max_piece, data.size() - at));
            MPI_Request request = MPI_REQUEST_NULL;
            job_->check(MPI_Iallreduce(MPI_IN_PLACE, data.data() + at, n, MPI_FLOAT, MPI_SUM, comm_,
                                       &request),
                        "MPI_Iallreduce");
            wait(request, "an all-reduce");
        }
    }

    void broadcast(std::span<float> data, int root) override {
        if (root < 0 || root >= count())
            throw std::logic_error("broadcast from process " + std::to_string(root) + " of " +
                                   std::to_string(count()));
        for (std::size_t at = 0; at < data.size(); at += max_piece) {
            const int n = int(std::min(max_piece, data.size() - at));
            MPI_Request request = MPI_REQUEST_NULL;
            job_->check(MPI_Ibcast(data.data() + at, n, MPI_FLOAT, root, comm_, &request),
                        "MPI_Ibcast");
            wait(request, "a broadcast");
        }
    }

    void all_gather(std::span<const float> in, std::span<float> out) override {
        if (out.size() != in.size() * std::size_t(count()))
            throw std::logic_error("all_gather: out must hold count() x in.size() floats");
        if (in.size() > std::size_t(std::numeric_limits<int>::max()))
            throw std::length_error("all_gather of more than 2^31 floats a process");
        const bool in_place = in.data() == out.data() + std::size_t(index()) * in.size();
        MPI_Request request = MPI_REQUEST_NULL;
        job_->check(MPI_Iallgather(in_place ? MPI_IN_PLACE : in.data(), int(in.size()), MPI_FLOAT,
                                   out.data(), int(in.size()), MPI_FLOAT, comm_, &request),
                    "MPI_Iallgather");
        wait(request, "an all-gather");
    }

    // The lengths first, then every text padded to the longest.
    std::vector<std::string> all_gather_text(const std::string& text) override {
        if (text.size() > std::size_t(std::numeric_limits<int>::max()))
            throw std::length_error("all_gather_text of more than 2^31 bytes");
        const int length = int(text.size());
        std::vector<int> lengths(static_cast<std::size_t>(count()));
        MPI_Request request = MPI_REQUEST_NULL;
        job_->check(
            MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_, &request),
            "MPI_Iallgather");
        wait(request, "an all-gather");
        const int longest = std::max(1, *std::max_element(lengths.begin(), lengths.end()));
        std::string mine = text;
        mine.resize(std::size_t(longest), '\0');
        std::string all(std::size_t(longest) * std::size_t(count()), '\0');
        job_->check(MPI_Iallgather(mine.data(), longest, MPI_CHAR, all.data(), longest, MPI_CHAR,
                                   comm_, &request),
                    "MPI_Iallgather");
        wait(request, "an all-gather");
        std::vector<std::string> texts;
        for (std::size_t p = 0; p < std::size_t(count()); ++p)
            texts.push_back(all.substr(p * std::size_t(longest), std::size_t(lengths[p])));
        return texts;
    }

    void barrier() override {
        MPI_Request request = MPI_REQUEST_NULL;
        job_->check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
        wait(request, "a barrier");
    }

    void abort(const std::string& reason) override { job_->abort(reason); }

  private:
    // Polls the request until it completes, the job is aborted, or the timeout passes: a
    // blocking MPI call would wait for ever for a process that died. A non-blocking collective
    // moves only while this process calls into MPI (Open MPI's libnbc progresses in MPI_Test),
    // so the first `busy_polling` are polled back to back; after that every 1 ms, so that a
    // long wait for a slower process costs little CPU. The roll call is made a window before
    // the timeout, so that the processes that are gone are named within it.
    void wait(MPI_Request& request, const char* what) {
        const auto start = std::chrono::steady_clock::now();
        const auto window =
            std::min<std::chrono::milliseconds>(std::chrono::seconds(2), timeout_ / 4);
        bool roll_called = false;
        for (;;) {
            if (const std::optional<std::string> reason = job_->abort_reason()) {
                job_->mark_broken();
                throw Aborted(*reason);
            }
            int done = 0;
            job_->check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (done != 0)
                return;
            const auto waited = std::chrono::steady_clock::now() - start;
            if (!roll_called && waited > timeout_ - window) {
                roll_called = true;
                if (const std::vector<int> silent = job_->silent_processes(window); !silent.empty())
                    fail(what, waited,
                         names(silent) +
                             (silent.size() == 1
                                  ? " no longer answers: it died, was killed or lost its connection"
                                  : " no longer answer: they died, were killed or lost their "
                                    "connections"));
            }
            if (waited > timeout_)
                fail(what, waited,
                     "every process answers, but one of them did not join it (it hangs, or was "
                     "started differently)");
            if (waited > busy_polling)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

    [[noreturn]] void fail(const char* what, std::chrono::steady_clock::duration waited,
                           const std::string& why) {
        job_->mark_broken();
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.1f",
                      std::chrono::duration<double>(waited).count());
        throw Aborted(job_->who_am_i() + ": " + what + " did not complete in " + seconds +
                      " s: " + why);
    }

    // "process 1 (host b), process 3 (host d)"
    std::string names(const std::vector<int>& processes) const {
        std::string text;
        for (const int p : processes)
            text += (text.empty() ? "" : ", ") + job_->who(p);
        return text;
    }

    std::shared_ptr<MpiJob> job_;
    std::chrono::milliseconds timeout_;
    MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<ProcessGroup> join_launched_processes(std::chrono::milliseconds timeout) {
    if (!launched_by_mpi())
        return single_process();
    return std::make_unique<MpiProcesses>(std::make_shared<MpiJob>(), MPI_COMM_WORLD, timeout);
}

}  // namespace scalelab::comm
