// Started by mpirun as P processes of D CPU devices each: trains one run across the processes,
// then (process 0) the same run in one process on P*D devices, and checks that the two agree:
// P x D x b equals 1 x (P*D) x b, the same loss at every step within 1e-5 relative (the
// gradient sums are grouped per process, so the last bits may differ), the same number of
// steps, and only process 0 reporting. Exits 0 when all holds, 1 with what did not.
// With "sync-bn": a resnet8 with synchronised batch norm, whose statistics then span the
// processes too. Usage: mpirun -np P mpi_training_check D [sync-bn]

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "comm/process_group.h"
#include "data/synthetic.h"
#include "recording_sink.h"
#include "train/same_experiment.h"
#include "train/trainer.h"

using namespace scalelab;

namespace {

RunSpec experiment(int devices, bool sync_bn) {
    RunSpec spec;
    spec.model = sync_bn ? "resnet8" : "cnn";
    spec.sync_bn = sync_bn;
    spec.dataset = "synthetic";
    spec.epochs = sync_bn ? 1 : 2;
    spec.batch = 16;
    // With sync BN the statistics' sums are grouped per process too, and training amplifies
    // that last-bit difference, the more so the larger the rate: one epoch (8 steps) at lr
    // 0.01 stays within the 1e-5 this check holds every layout to (two epochs, or lr 0.2,
    // went past it).
    spec.lr = sync_bn ? 0.01 : 0.05;
    spec.lr_scaling = LrScaling::Linear;  // counts every process's devices
    spec.threads = 1;
    spec.seed = 5;
    spec.devices = devices;
    spec.targets = {};
    return spec;
}

void train(const RunSpec& spec, const data::TrainTest& data,
           std::shared_ptr<comm::ProcessGroup> processes, testing::RecordingSink& sink) {
    Trainer trainer(spec, data, sink);
    trainer.set_process_group(std::move(processes));
    const RunEnd end = trainer.run();
    if (end.status != RunStatus::Finished && end.status != RunStatus::ReachedTarget)
        throw std::runtime_error("the run ended " + std::string(to_string(end.status)) + ": " +
                                 end.message);
}

void require(bool holds, const std::string& what) {
    if (!holds)
        throw std::runtime_error(what);
}

}  // namespace

int main(int argc, char** argv) {
    const int local = argc > 1 ? std::atoi(argv[1]) : 2;
    const bool sync_bn = argc > 2 && std::string(argv[2]) == "sync-bn";
    std::shared_ptr<comm::ProcessGroup> processes =
        comm::join_launched_processes(std::chrono::seconds(60));
    try {
        data::SyntheticConfig config;
        config.train = 512;
        config.test = 128;
        const data::TrainTest data = data::make_synthetic(config);
        const RunSpec spec = experiment(local, sync_bn);
        const std::string mismatch = experiment_mismatch(*processes, spec);
        require(mismatch.empty(), mismatch);

        testing::RecordingSink across;
        train(spec, data, processes, across);
        if (processes->index() != 0) {
            require(across.steps.empty() && across.starts.empty(),
                    "a process other than 0 reported to its sink");
            return 0;
        }
        const int ranks = local * processes->count();
        testing::RecordingSink alone;
        train(experiment(ranks, sync_bn), data, nullptr, alone);
        require(across.starts.front().devices == ranks,
                "the run's info counts " + std::to_string(across.starts.front().devices) +
                    " devices, not " + std::to_string(ranks));
        require(across.steps.size() == alone.steps.size(), std::to_string(across.steps.size()) +
                                                               " steps against " +
                                                               std::to_string(alone.steps.size()));
        double worst = 0;
        std::size_t same_bits = 0;  // leading steps whose losses are the same bits
        for (std::size_t i = 0; i < alone.steps.size(); ++i) {
            const double a = across.steps[i].loss;
            const double b = alone.steps[i].loss;
            worst = std::max(worst, std::abs(a - b) / std::max(1e-12, std::abs(b)));
            if (a == b && same_bits == i)
                ++same_bits;
            require(std::abs(a - b) <= 1e-5 * std::abs(b),
                    "step " + std::to_string(i + 1) + ": loss " + std::to_string(a) + " across " +
                        "processes, " + std::to_string(b) + " in one");
        }
        std::printf(
            "ok: %d processes x %d devices = 1 x %d: %zu steps, the first %zu the same bits, "
            "losses within %.2g relative\n",
            processes->count(), local, ranks, alone.steps.size(), same_bits, worst);
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "process %d of %d: %s\n", processes->index(), processes->count(),
                     error.what());
        return 1;
    }
}
