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
#include <span>
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

// The all-reduce's two exchanges, told apart.
constexpr int reduce_tag = 1;
constexpr int gather_tag = 2;

// The reduce-scatter's segments, in floats: the other processes' copies of one segment of a
// block are summed while they are still in the cache. 512 KiB measured best of 64 KiB to 4 MiB
// for 16 MiB between 2 processes of one machine.
constexpr std::size_t segment_floats = std::size_t(1) << 17;

// Process p's block of an all-reduce of n floats over P processes: [n p / P, n (p + 1) / P),
// and its segments of segment_floats.
struct Blocks {
    std::size_t n;
    int processes;

    std::size_t first(int p) const { return n * std::size_t(p) / std::size_t(processes); }
    std::span<float> of(std::span<float> data, int p) const {
        return data.subspan(first(p), first(p + 1) - first(p));
    }
    std::size_t segments(int p) const {
        return (first(p + 1) - first(p) + segment_floats - 1) / segment_floats;
    }
    // Segment k of block p; empty past the block's end.
    std::span<float> segment(std::span<float> data, int p, std::size_t k) const {
        const std::span<float> block = of(data, p);
        const std::size_t begin = std::min(block.size(), k * segment_floats);
        return block.subspan(begin, std::min(segment_floats, block.size() - begin));
    }
};

class MpiProcesses final : public ProcessGroup {
  public:
    // A group over its own duplicate of `parent`.
    MpiProcesses(std::shared_ptr<MpiJob> job, MPI_Comm parent, std::chrono::milliseconds timeout)
        : job_(std::move(job)), timeout_(timeout) {
        call([&] { return MPI_Comm_dup(parent, &comm_); }, "MPI_Comm_dup");
        call([&] { return MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN); },
             "MPI_Comm_set_errhandler");
    }

    ~MpiProcesses() override {
        if (const auto hold = job_->hold_mpi())
            MPI_Comm_free(&comm_);
    }

    std::unique_ptr<ProcessGroup> duplicate() override {
        return std::make_unique<MpiProcesses>(job_, comm_, timeout_);
    }

    int index() const override { return job_->index(); }
    int count() const override { return job_->count(); }
    std::string host() const override { return job_->host(job_->index()); }

    // In pieces whose blocks fit MPI's int counts.
    void all_reduce_sum(std::span<float> data) override {
        const std::size_t piece = max_piece * std::size_t(count());
        for (std::size_t at = 0; at < data.size(); at += piece)
            reduce_scatter_all_gather(data.subspan(at, std::min(piece, data.size() - at)));
    }

    void broadcast(std::span<float> data, int root) override {
        if (root < 0 || root >= count())
            throw std::logic_error("broadcast from process " + std::to_string(root) + " of " +
                                   std::to_string(count()));
        for (std::size_t at = 0; at < data.size(); at += max_piece) {
            const int n = int(std::min(max_piece, data.size() - at));
            MPI_Request request = MPI_REQUEST_NULL;
            call([&] { return MPI_Ibcast(data.data() + at, n, MPI_FLOAT, root, comm_, &request); },
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
        call(
            [&] {
                return MPI_Iallgather(in_place ? MPI_IN_PLACE : in.data(), int(in.size()),
                                      MPI_FLOAT, out.data(), int(in.size()), MPI_FLOAT, comm_,
                                      &request);
            },
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
        call(
            [&] {
                return MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_,
                                      &request);
            },
            "MPI_Iallgather");
        wait(request, "an all-gather");
        const int longest = std::max(1, *std::max_element(lengths.begin(), lengths.end()));
        std::string mine = text;
        mine.resize(std::size_t(longest), '\0');
        std::string all(std::size_t(longest) * std::size_t(count()), '\0');
        call(
            [&] {
                return MPI_Iallgather(mine.data(), longest, MPI_CHAR, all.data(), longest, MPI_CHAR,
                                      comm_, &request);
            },
            "MPI_Iallgather");
        wait(request, "an all-gather");
        std::vector<std::string> texts;
        for (std::size_t p = 0; p < std::size_t(count()); ++p)
            texts.push_back(all.substr(p * std::size_t(longest), std::size_t(lengths[p])));
        return texts;
    }

    void barrier() override {
        MPI_Request request = MPI_REQUEST_NULL;
        call([&] { return MPI_Ibarrier(comm_, &request); }, "MPI_Ibarrier");
        wait(request, "a barrier");
    }

    void abort(const std::string& reason) override { job_->abort(reason); }

    std::vector<std::string> silent_processes(std::chrono::milliseconds window) override {
        std::vector<std::string> silent;
        for (const int p : job_->silent_processes(window))
            silent.push_back(job_->who(p));
        return silent;
    }

  private:
    // The all-reduce, in two exchanges of point-to-point messages (MPI_Isend, MPI_Irecv).
    // Process p owns block p of the data (Blocks):
    //   1. reduce-scatter: every process sends block q to process q and receives its own block
    //      from every other, then sums it in process order, x_0 + x_1 + ... + x_{P-1}; in
    //      segments, two in flight (reduce_scatter);
    //   2. all-gather: every process sends its summed block to every other, and receives theirs.
    // Each process sends (P - 1) / P of the data in each exchange, the least an all-reduce can
    // (a ring's volume); every block is summed once, by its owner, in one order, so every
    // process has the same bits. Open MPI 4.1's own non-blocking MPI_Iallreduce (libnbc) runs at
    // a fraction of its blocking MPI_Allreduce's speed; this one polls as fast as point-to-point
    // messages go (docs/cluster.md has the figures).
    void reduce_scatter_all_gather(std::span<float> data) {
        const Blocks blocks{data.size(), count()};
        reduce_scatter(data, blocks);
        requests_.clear();
        const std::span<float> mine = blocks.of(data, index());
        for (int q = 0; q < count(); ++q) {
            if (q == index())
                continue;
            if (const std::span<float> theirs = blocks.of(data, q); !theirs.empty())
                call(
                    [&] {
                        return MPI_Irecv(theirs.data(), int(theirs.size()), MPI_FLOAT, q,
                                         gather_tag, comm_, &requests_.emplace_back());
                    },
                    "MPI_Irecv");
            if (!mine.empty())
                call(
                    [&] {
                        return MPI_Isend(mine.data(), int(mine.size()), MPI_FLOAT, q, gather_tag,
                                         comm_, &requests_.emplace_back());
                    },
                    "MPI_Isend");
        }
        wait(requests_, "an all-reduce");
    }

    // Step 1, segment by segment: while segment k's copies are summed, segment k + 1's messages
    // are under way. Messages of one sender and tag arrive in the order they were sent (MPI's
    // rule), so the two segments in flight never mix.
    void reduce_scatter(std::span<float> data, const Blocks& blocks) {
        const int processes = count();
        const int me = index();
        std::size_t segments = 0;
        for (int p = 0; p < processes; ++p)
            segments = std::max(segments, blocks.segments(p));
        // Two segments in flight; slot q of each: process q's copy of that segment of my block.
        const std::size_t slot_floats = segment_floats;
        received_.resize(2 * slot_floats * std::size_t(processes));
        const auto slots = [&](std::size_t k) {
            return received_.data() + (k % 2) * slot_floats * std::size_t(processes);
        };
        const auto start = [&](std::size_t k) {
            std::vector<MPI_Request>& requests = in_flight_[k % 2];
            requests.clear();
            const std::span<float> mine = blocks.segment(data, me, k);
            for (int q = 0; q < processes; ++q) {
                if (q == me)
                    continue;
                if (!mine.empty())
                    call(
                        [&] {
                            return MPI_Irecv(slots(k) + std::size_t(q) * slot_floats,
                                             int(mine.size()), MPI_FLOAT, q, reduce_tag, comm_,
                                             &requests.emplace_back());
                        },
                        "MPI_Irecv");
                if (const std::span<float> theirs = blocks.segment(data, q, k); !theirs.empty())
                    call(
                        [&] {
                            return MPI_Isend(theirs.data(), int(theirs.size()), MPI_FLOAT, q,
                                             reduce_tag, comm_, &requests.emplace_back());
                        },
                        "MPI_Isend");
            }
        };
        if (segments > 0)
            start(0);
        for (std::size_t k = 0; k < segments; ++k) {
            if (k + 1 < segments)
                start(k + 1);
            wait(in_flight_[k % 2], "an all-reduce");
            sum_in_process_order(blocks.segment(data, me, k), slots(k), slot_floats);
        }
    }

    // mine[i] <- x_0[i] + x_1[i] + ... + x_{P-1}[i], left to right, where x_index() is mine
    // itself and x_q (q another process) starts at slots + q * stride.
    void sum_in_process_order(std::span<float> mine, const float* slots, std::size_t stride) {
        const int processes = count();
        const int me = index();
        float* const out = mine.data();
        const std::size_t n = mine.size();
        if (processes == 2) {  // a + b == b + a in IEEE arithmetic: one vectorisable pass
            const float* other = slots + std::size_t(1 - me) * stride;
            for (std::size_t i = 0; i < n; ++i)
                out[i] += other[i];
            return;
        }
        std::vector<const float*> x(static_cast<std::size_t>(processes), nullptr);
        for (int q = 0; q < processes; ++q)
            x[std::size_t(q)] = q == me ? out : slots + std::size_t(q) * stride;
        for (std::size_t i = 0; i < n; ++i) {
            float sum = x[0][i];
            for (std::size_t q = 1; q < x.size(); ++q)
                sum += x[q][i];
            out[i] = sum;
        }
    }

    // One MPI call, under MpiJob's hold (none once the job is broken: Aborted), its code checked.
    template <typename Call>
    void call(Call&& mpi_call, const char* name) {
        int code = MPI_SUCCESS;
        {
            const auto hold = job_->hold_mpi();
            if (!hold)
                throw Aborted(job_->who_am_i() +
                              ": an earlier collective of this process failed or was aborted");
            code = mpi_call();
        }
        job_->check(code, name);
    }

    void wait(MPI_Request& request, const char* what) {
        wait(std::span<MPI_Request>(&request, 1), what);
    }

    // Polls the requests until all complete, the job is aborted, or the timeout passes: a
    // blocking MPI call would wait for ever for a process that died. A non-blocking collective
    // moves only while this process calls into MPI (Open MPI's libnbc progresses in MPI_Test),
    // so the first `busy_polling` are polled back to back; after that every 1 ms, so that a
    // long wait for a slower process costs little CPU. The roll call is made a window before
    // the timeout, so that the processes that are gone are named within it.
    void wait(std::span<MPI_Request> requests, const char* what) {
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
            call(
                [&] {
                    return MPI_Testall(int(requests.size()), requests.data(), &done,
                                       MPI_STATUSES_IGNORE);
                },
                "MPI_Testall");
            if (done != 0)
                return;
            const auto waited = std::chrono::steady_clock::now() - start;
            if (!roll_called && waited > timeout_ - window) {
                roll_called = true;
                if (const std::vector<std::string> silent = silent_processes(window);
                    !silent.empty())
                    fail(what, waited, gone_text(silent));
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

    std::shared_ptr<MpiJob> job_;
    std::chrono::milliseconds timeout_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    std::vector<float> received_;  // the reduce-scatter's segments from the other processes
    std::vector<MPI_Request> in_flight_[2];  // the reduce-scatter's two segments in flight
    std::vector<MPI_Request> requests_;      // the all-gather's messages
};

}  // namespace

std::unique_ptr<ProcessGroup> join_launched_processes(std::chrono::milliseconds timeout) {
    if (!launched_by_mpi())
        return single_process();
    return std::make_unique<MpiProcesses>(std::make_shared<MpiJob>(), MPI_COMM_WORLD, timeout);
}

}  // namespace scalelab::comm
