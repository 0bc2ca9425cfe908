// Started by mpirun as P processes, each with D local ranks (threads): checks that
// HierarchicalComm over real MPI processes gives every global rank the right all-reduce (against
// a sum in double, the same bits on every rank of every process), broadcast and all-gather.
// Exits 0 when all holds, 1 with what did not. Usage: mpirun -np P mpi_collectives_check D

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collective_input.h"
#include "comm/hierarchical_comm.h"
#include "comm/process_group.h"
#include "comm/thread_comm.h"

using namespace scalelab::comm;
using scalelab::testing::collective_input;

namespace {

// FNV-1a of the buffer's bits: equal buffers, equal words, in every process.
std::uint64_t bits_hash(const std::vector<float>& buffer) {
    std::uint64_t hash = 1469598103934665603ULL;
    for (const float value : buffer) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        hash = (hash ^ bits) * 1099511628211ULL;
    }
    return hash;
}

// Runs body(local rank, communicator) on the D local threads; the first error, if any.
std::string on_local_ranks(std::vector<std::unique_ptr<HierarchicalComm>>& comms,
                           const std::function<void(int, HierarchicalComm&)>& body) {
    std::vector<std::string> errors(comms.size());
    std::vector<std::thread> threads;
    for (std::size_t l = 0; l < comms.size(); ++l)
        threads.emplace_back([&, l] {
            try {
                body(int(l), *comms[l]);
            } catch (const std::exception& error) {
                errors[l] = error.what();
            }
        });
    for (std::thread& thread : threads)
        thread.join();
    for (const std::string& error : errors)
        if (!error.empty())
            return error;
    return {};
}

void require(bool holds, const std::string& what) {
    if (!holds)
        throw std::runtime_error(what);
}

void check_all_reduce(std::vector<std::unique_ptr<HierarchicalComm>>& comms,
                      ProcessGroup& processes, std::size_t n) {
    const int ranks = comms.front()->size();
    std::vector<std::vector<float>> buffers(comms.size(), std::vector<float>(n));
    const std::string error = on_local_ranks(comms, [&](int l, HierarchicalComm& comm) {
        scalelab::testing::fill_collective_input(buffers[std::size_t(l)], comm.rank());
        comm.all_reduce(buffers[std::size_t(l)], ReduceOp::Sum);
    });
    require(error.empty(), error);
    for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        double magnitude = 0;
        for (int r = 0; r < ranks; ++r) {
            sum += collective_input(r, i);
            magnitude += std::abs(double(collective_input(r, i)));
        }
        require(std::abs(double(buffers[0][i]) - sum) <= 1e-6 * magnitude,
                "all-reduce of " + std::to_string(n) + " floats: element " + std::to_string(i) +
                    " is " + std::to_string(buffers[0][i]) + ", not " + std::to_string(sum));
    }
    for (std::size_t l = 1; l < buffers.size(); ++l)
        require(buffers[l] == buffers[0], "local ranks disagree after an all-reduce");
    const std::vector<std::string> hashes =
        processes.all_gather_text(std::to_string(bits_hash(buffers[0])));
    for (const std::string& hash : hashes)
        require(hash == hashes.front(), "processes disagree on an all-reduce's bits");
}

void check_broadcast_and_gather(std::vector<std::unique_ptr<HierarchicalComm>>& comms) {
    const int ranks = comms.front()->size();
    const std::size_t n = 33;
    for (int root = 0; root < ranks; ++root) {
        const std::string error = on_local_ranks(comms, [&](int, HierarchicalComm& comm) {
            std::vector<float> buffer(n);
            scalelab::testing::fill_collective_input(buffer, comm.rank());
            comm.broadcast(buffer, root);
            for (std::size_t i = 0; i < n; ++i)
                require(buffer[i] == collective_input(root, i),
                        "broadcast from rank " + std::to_string(root));
        });
        require(error.empty(), error);
    }
    const std::string error = on_local_ranks(comms, [&](int, HierarchicalComm& comm) {
        std::vector<float> in(n);
        scalelab::testing::fill_collective_input(in, comm.rank());
        std::vector<float> out(n * std::size_t(ranks));
        comm.all_gather(in, out);
        for (int from = 0; from < ranks; ++from)
            for (std::size_t i = 0; i < n; ++i)
                require(out[std::size_t(from) * n + i] == collective_input(from, i),
                        "all-gather: rank " + std::to_string(from) + "'s block");
    });
    require(error.empty(), error);
}

}  // namespace

int main(int argc, char** argv) {
    const int local = argc > 1 ? std::atoi(argv[1]) : 2;
    std::shared_ptr<ProcessGroup> processes = join_launched_processes(std::chrono::seconds(60));
    try {
        const auto inside = ThreadGroup::create(local);
        std::vector<std::unique_ptr<HierarchicalComm>> comms;
        for (int l = 0; l < local; ++l)
            comms.push_back(std::make_unique<HierarchicalComm>(inside->communicator(l), processes));
        for (const std::size_t n :
             {std::size_t(1), std::size_t(17), std::size_t(4099), std::size_t(1000003)})
            check_all_reduce(comms, *processes, n);
        check_broadcast_and_gather(comms);
        const std::vector<std::string> hosts = processes->all_gather_text(processes->host());
        if (processes->index() == 0)
            std::printf("ok: %d processes x %d local ranks (hosts %s ...)\n", processes->count(),
                        local, hosts.front().c_str());
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "process %d of %d: %s\n", processes->index(), processes->count(),
                     error.what());
        return 1;
    }
}
