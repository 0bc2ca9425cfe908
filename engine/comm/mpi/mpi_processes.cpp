// The processes an MPI launcher started together, joined over MPI (Open MPI from Debian). The
// one file of the engine that includes mpi.h; cmake/scalelab_mpi.cmake builds it where MPI was
// found.

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "comm/communicator.h"
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

std::string mpi_error_text(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        return "MPI error " + std::to_string(code);
    return std::string(text, std::size_t(length));
}

// How long wait() polls a collective back to back before it sleeps between polls: longer than
// a 64 MB all-reduce between two processes of one machine takes (28 ms measured).
constexpr auto busy_polling = std::chrono::milliseconds(100);

// MPI counts are ints: larger buffers go in pieces of at most 2^30 elements.
constexpr std::size_t max_piece = std::size_t(1) << 30;

class MpiProcesses final : public ProcessGroup {
  public:
    explicit MpiProcesses(std::chrono::milliseconds timeout) : timeout_(timeout) {
        int provided = 0;
        // MULTIPLE: a run's threads call MPI at the same time, each on its own duplicate()
        // (the gradient reducer's, synchronised batch norm's).
        check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init");
        if (provided < MPI_THREAD_MULTIPLE)
            throw std::runtime_error(
                "this MPI cannot be called from several threads at once "
                "(MPI_THREAD_MULTIPLE)");
        // Errors come back as codes (turned into exceptions here), never end the program.
        check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
        check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
        check(MPI_Comm_rank(comm_, &index_), "MPI_Comm_rank");
        check(MPI_Comm_size(comm_, &count_), "MPI_Comm_size");
        char name[MPI_MAX_PROCESSOR_NAME];
        int length = 0;
        check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
        host_.assign(name, std::size_t(length));
    }

    ~MpiProcesses() override {
        // After a collective that never completed, MPI_Finalize could wait for it for ever:
        // the process ends without it (the launcher then ends the others).
        if (broken_ || (owner_ != nullptr && *owner_))
            return;
        MPI_Comm_free(&comm_);
        if (owner_ == nullptr)
            MPI_Finalize();
    }

    std::unique_ptr<ProcessGroup> duplicate() override {
        auto copy = std::unique_ptr<MpiProcesses>(new MpiProcesses(*this));
        check(MPI_Comm_dup(comm_, &copy->comm_), "MPI_Comm_dup");
        copy->owner_ = &broken_;
        return copy;
    }

    int index() const override { return index_; }
    int count() const override { return count_; }
    std::string host() const override { return host_; }

    void all_reduce_sum(std::span<float> data) override {
        for (std::size_t at = 0; at < data.size(); at += max_piece) {
            const int n = int(std::min(max_piece, data.size() - at));
            MPI_Request request = MPI_REQUEST_NULL;
            check(MPI_Iallreduce(MPI_IN_PLACE, data.data() + at, n, MPI_FLOAT, MPI_SUM, comm_,
                                 &request),
                  "MPI_Iallreduce");
            wait(request, "an all-reduce");
        }
    }

    void broadcast(std::span<float> data, int root) override {
        if (root < 0 || root >= count_)
            throw std::logic_error("broadcast from process " + std::to_string(root) + " of " +
                                   std::to_string(count_));
        for (std::size_t at = 0; at < data.size(); at += max_piece) {
            const int n = int(std::min(max_piece, data.size() - at));
            MPI_Request request = MPI_REQUEST_NULL;
            check(MPI_Ibcast(data.data() + at, n, MPI_FLOAT, root, comm_, &request), "MPI_Ibcast");
            wait(request, "a broadcast");
        }
    }

    void all_gather(std::span<const float> in, std::span<float> out) override {
        if (out.size() != in.size() * std::size_t(count_))
            throw std::logic_error("all_gather: out must hold count() x in.size() floats");
        if (in.size() > std::size_t(std::numeric_limits<int>::max()))
            throw std::length_error("all_gather of more than 2^31 floats a process");
        const bool in_place = in.data() == out.data() + std::size_t(index_) * in.size();
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallgather(in_place ? MPI_IN_PLACE : in.data(), int(in.size()), MPI_FLOAT,
                             out.data(), int(in.size()), MPI_FLOAT, comm_, &request),
              "MPI_Iallgather");
        wait(request, "an all-gather");
    }

    // The lengths first, then every text padded to the longest.
    std::vector<std::string> all_gather_text(const std::string& text) override {
        if (text.size() > std::size_t(std::numeric_limits<int>::max()))
            throw std::length_error("all_gather_text of more than 2^31 bytes");
        const int length = int(text.size());
        std::vector<int> lengths(static_cast<std::size_t>(count_));
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_, &request),
              "MPI_Iallgather");
        wait(request, "an all-gather");
        const int longest = std::max(1, *std::max_element(lengths.begin(), lengths.end()));
        std::string mine = text;
        mine.resize(std::size_t(longest), '\0');
        std::string all(std::size_t(longest) * std::size_t(count_), '\0');
        check(MPI_Iallgather(mine.data(), longest, MPI_CHAR, all.data(), longest, MPI_CHAR, comm_,
                             &request),
              "MPI_Iallgather");
        wait(request, "an all-gather");
        std::vector<std::string> texts;
        for (std::size_t p = 0; p < std::size_t(count_); ++p)
            texts.push_back(all.substr(p * std::size_t(longest), std::size_t(lengths[p])));
        return texts;
    }

    void barrier() override {
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
        wait(request, "a barrier");
    }

  private:
    void check(int code, const char* call) {
        if (code != MPI_SUCCESS) {
            broken_ = true;
            throw std::runtime_error(where() + ": " + call + " failed: " + mpi_error_text(code));
        }
    }

    // Polls the request until it completes or the timeout passes: a blocking MPI call would
    // wait for ever for a process that died. A non-blocking collective moves only while this
    // process calls into MPI (Open MPI's libnbc progresses in MPI_Test), so the first
    // `busy_polling` are polled back to back; after that every 1 ms, so that a long wait for a
    // slower process costs little CPU.
    void wait(MPI_Request& request, const char* what) {
        const auto start = std::chrono::steady_clock::now();
        const auto deadline = start + timeout_;
        for (;;) {
            int done = 0;
            check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (done != 0)
                return;
            const auto now = std::chrono::steady_clock::now();
            if (now > deadline) {
                broken_ = true;
                throw Aborted(where() + ": " + what + " did not complete within " +
                              std::to_string(timeout_.count() / 1000) +
                              " s: another process stopped, died or was killed");
            }
            if (now - start > busy_polling)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

    // "process 1 of 2 (host node17)": who says what went wrong.
    std::string where() const {
        return "process " + std::to_string(index_) + " of " + std::to_string(count_) + " (host " +
               (host_.empty() ? std::string("unknown") : host_) + ")";
    }

    std::chrono::milliseconds timeout_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    int index_ = 0;
    int count_ = 1;
    std::string host_;
    bool broken_ = false;  // a collective failed or timed out: MPI is not finalised
    // A duplicate's: the group that initialised MPI (its broken_ flag), which finalises it and
    // must outlive it; null for that group itself.
    const bool* owner_ = nullptr;
};

}  // namespace

std::unique_ptr<ProcessGroup> join_launched_processes(std::chrono::milliseconds timeout) {
    if (!launched_by_mpi())
        return single_process();
    return std::make_unique<MpiProcesses>(timeout);
}

}  // namespace scalelab::comm
