// The fused GPU optimisers (Backend::optimizer of the CUDA backend) against the CPU ones
// (optim::make_optimizer): every optimiser in several configurations, over a segment layout that
// mixes weights, biases and batch-norm scales/shifts with gaps between segments, three steps at
// changing learning rates from the same random parameters and gradients; after every step the
// parameters within a relative error of 1e-5 and the gaps untouched. The GPU tests skip with the
// reason where no GPU can be used. Checked without a GPU: the chunk table the kernels run over
// covers every segment exactly.

#include <QtTest>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/module/optimizer_chunks.h"
#include "backend/gpu_runtime.h"
#include "error.h"
#include "gpu_test_support.h"
#include "optim/make_optimizer.h"
#include "train/run_spec.h"

using namespace scalelab;
using namespace scalelab::testing;

namespace {

constexpr double kTolerance = 1e-5;
constexpr std::size_t kBufferFloats = 21200;

// Out of buffer order, one tensor larger than a chunk (several blocks add up its norms), an
// empty one, a gap of 13 floats between the conv bias and the BN scale and 12 after the end.
std::vector<optim::ParamSegment> mixed_segments() {
    using optim::ParamRole;
    return {
        {"fc.weight", ParamRole::Weight, 20178, 1000},
        {"conv.weight", ParamRole::Weight, 0, 20000},
        {"conv.bias", ParamRole::Bias, 20000, 37},
        {"bn.scale", ParamRole::NormScale, 20050, 64},
        {"bn.shift", ParamRole::NormShift, 20114, 64},
        {"empty", ParamRole::Weight, 21178, 0},
        {"fc.bias", ParamRole::Bias, 21178, 10},
    };
}

// The floats no segment covers.
std::vector<std::size_t> gap_indices() {
    std::vector<bool> covered(kBufferFloats, false);
    for (const optim::ParamSegment& segment : mixed_segments())
        for (std::size_t i = 0; i < segment.size; ++i)
            covered[segment.offset + i] = true;
    std::vector<std::size_t> gaps;
    for (std::size_t i = 0; i < kBufferFloats; ++i)
        if (!covered[i])
            gaps.push_back(i);
    return gaps;
}

struct Config {
    const char* name;
    RunSpec spec;
};

RunSpec spec_for(OptimizerKind kind) {
    RunSpec spec;
    spec.optimizer = kind;
    return spec;
}

// Three steps of the CPU and the GPU optimiser for `config` from the same state; records a test
// failure at the first step whose parameters differ by more than kTolerance or that wrote into a
// gap. The optimiser is the backend's (Backend::optimizer): its steps run on the backend's stream,
// in order with its uploads and downloads.
void compare_with_cpu(const Config& config) {
    const std::vector<optim::ParamSegment> segments = mixed_segments();
    const std::vector<std::size_t> gaps = gap_indices();
    const std::vector<float> initial = random_values(kBufferFloats, 11);
    std::vector<float> cpu_params = initial;

    const std::unique_ptr<Backend> gpu = make_gpu_backend({.gpu = 0});
    DeviceBuffer gpu_params = to_device(*gpu, initial);
    DeviceBuffer gpu_grads = gpu->allocate(kBufferFloats);
    const std::unique_ptr<optim::Optimizer> cpu_optimizer =
        optim::make_optimizer(config.spec, segments);
    const std::unique_ptr<optim::Optimizer> gpu_optimizer = gpu->optimizer(config.spec, segments);
    QVERIFY(gpu_optimizer->name() == cpu_optimizer->name());

    const double lrs[] = {0.3, 0.1, 0.6};
    for (int step = 0; step < 3; ++step) {
        const std::vector<float> grads =
            random_values(kBufferFloats, 100 + static_cast<std::uint32_t>(step), 0.1f);
        gpu->upload(grads, gpu_grads.data());
        cpu_optimizer->step(cpu_params, grads, lrs[step]);
        gpu_optimizer->step(gpu_params.span(),
                            std::span<const float>(gpu_grads.data(), kBufferFloats), lrs[step]);
        const std::vector<float> got = to_host(*gpu, gpu_params.data(), kBufferFloats);
        const double error = relative_error(got, cpu_params);
        QVERIFY2(error <= kTolerance, qPrintable(QString("%1, step %2: relative error %3")
                                                     .arg(config.name)
                                                     .arg(step + 1)
                                                     .arg(error)));
        for (const std::size_t i : gaps)
            QVERIFY2(got[i] == initial[i], qPrintable(QString("%1, step %2: gap float %3 written")
                                                          .arg(config.name)
                                                          .arg(step + 1)
                                                          .arg(i)));
    }
}

void compare_all(const std::vector<Config>& configs) {
    for (const Config& config : configs) {
        compare_with_cpu(config);
        if (QTest::currentTestFailed())
            return;
    }
}

}  // namespace

class TestFusedOptimizers : public QObject {
    Q_OBJECT

  private slots:
    // No GPU needed: the chunks tile every kept non-empty segment exactly, in order, none
    // longer than the chunk size, and each segment's range lists its own chunks.
    void chunkTableTilesSegments() {
        const std::vector<optim::ParamSegment> segments = mixed_segments();
        constexpr std::size_t kChunk = 300;
        const auto weights_only = [](const optim::ParamSegment& s) {
            return s.role == optim::ParamRole::Weight;
        };
        const cuda::ChunkTable table = cuda::chunk_segments(segments, weights_only, kChunk);
        std::vector<int> covered(kBufferFloats, 0);
        for (const cuda::OptimizerChunk& chunk : table.chunks) {
            QVERIFY(chunk.size >= 1 && chunk.size <= kChunk);
            for (std::size_t i = 0; i < chunk.size; ++i)
                ++covered[chunk.begin + i];
        }
        std::size_t expected_ranges = 0;
        for (std::size_t s = 0; s < segments.size(); ++s) {
            const bool kept = segments[s].size > 0 && weights_only(segments[s]);
            expected_ranges += kept ? 1 : 0;
            for (std::size_t i = 0; i < segments[s].size; ++i)
                QCOMPARE(covered[segments[s].offset + i], kept ? 1 : 0);
        }
        QCOMPARE(table.segments.size(), expected_ranges);
        std::uint64_t next_chunk = 0;
        for (const cuda::SegmentChunks& range : table.segments) {
            QCOMPARE(range.first_chunk, next_chunk);
            const optim::ParamSegment& segment = segments[range.segment];
            QCOMPARE(range.chunk_count, (segment.size + kChunk - 1) / kChunk);
            std::uint64_t begin = segment.offset;
            for (std::uint64_t c = 0; c < range.chunk_count; ++c) {
                const cuda::OptimizerChunk& chunk = table.chunks[range.first_chunk + c];
                QCOMPARE(chunk.segment, range.segment);
                QCOMPARE(chunk.begin, begin);
                begin += chunk.size;
            }
            QCOMPARE(begin, std::uint64_t{segment.offset + segment.size});
            next_chunk += range.chunk_count;
        }
        QCOMPARE(next_chunk, std::uint64_t{table.chunks.size()});
        QVERIFY_THROWS_EXCEPTION(Error, cuda::chunk_segments(segments, weights_only, 0));
    }

    void sgdMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        std::vector<Config> configs;
        RunSpec spec = spec_for(OptimizerKind::Sgd);
        spec.momentum = 0;
        configs.push_back({"plain", spec});
        spec = spec_for(OptimizerKind::Sgd);
        spec.momentum = 0.9;
        spec.weight_decay = 0.05;
        spec.decay_norm_and_bias = false;
        configs.push_back({"momentum, decay not on bias/BN", spec});
        spec.nesterov = true;
        spec.decay_norm_and_bias = true;
        configs.push_back({"nesterov, decay everywhere", spec});
        compare_all(configs);
    }

    void larsMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        std::vector<Config> configs;
        RunSpec spec = spec_for(OptimizerKind::Lars);
        spec.momentum = 0.9;
        spec.weight_decay = 0.01;
        spec.decay_norm_and_bias = false;
        spec.trust_coefficient = 0.02;
        configs.push_back({"momentum, decay not on bias/BN", spec});
        // eta ||w|| / (||g|| + wd ||w||) is about 0.18 here: LARC keeps the global lr at 0.1
        // (local 1) and caps it at 0.3 and 0.6 (local 0.6 and 0.3).
        spec.larc = true;
        spec.nesterov = true;
        configs.push_back({"LARC, nesterov", spec});
        spec = spec_for(OptimizerKind::Lars);
        spec.momentum = 0;
        spec.weight_decay = 0.01;
        spec.adapt_norm_and_bias = true;
        configs.push_back({"no momentum, bias/BN adapted", spec});
        compare_all(configs);
    }

    void lambMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        std::vector<Config> configs;
        RunSpec spec = spec_for(OptimizerKind::Lamb);
        spec.eps = 1e-6;
        spec.weight_decay = 0.01;
        spec.decay_norm_and_bias = false;
        configs.push_back({"decay not on bias/BN", spec});
        // ||w|| / ||u|| is about 0.58 here (|u| about 1 after bias correction, w uniform in
        // [-1, 1]): a clamp of 0.3 acts on every tensor.
        spec.trust_clamp = 0.3;
        spec.adapt_norm_and_bias = true;
        configs.push_back({"trust clamp, bias/BN adapted", spec});
        spec.trust_clamp = 2.0;
        spec.adapt_norm_and_bias = false;
        configs.push_back({"clamp above the ratios", spec});
        compare_all(configs);
    }

    void novogradMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        std::vector<Config> configs;
        RunSpec spec = spec_for(OptimizerKind::NovoGrad);
        spec.beta1 = 0.95;
        spec.beta2 = 0.98;
        spec.weight_decay = 0.01;
        spec.decay_norm_and_bias = false;
        spec.grad_averaging = true;
        configs.push_back({"grad averaging, bias/BN per float", spec});
        spec.grad_averaging = false;
        spec.adapt_norm_and_bias = true;
        spec.decay_norm_and_bias = true;
        configs.push_back({"no averaging, bias/BN adapted", spec});
        compare_all(configs);
    }

    void adamwMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        std::vector<Config> configs;
        RunSpec spec = spec_for(OptimizerKind::AdamW);
        spec.weight_decay = 0.01;
        spec.decay_norm_and_bias = false;
        configs.push_back({"decay not on bias/BN", spec});
        spec.weight_decay = 0;
        configs.push_back({"no decay", spec});
        compare_all(configs);
    }

    // The norms are reduced in a fixed order: two optimisers from the same state give the
    // same bits.
    void layerwiseNormsRepeatBitForBit() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const std::vector<float> initial = random_values(kBufferFloats, 5);
        const std::vector<float> grads = random_values(kBufferFloats, 6, 0.1f);
        const std::unique_ptr<Backend> gpu = make_gpu_backend({.gpu = 0});
        const DeviceBuffer gpu_grads = to_device(*gpu, grads);
        for (const OptimizerKind kind :
             {OptimizerKind::Lars, OptimizerKind::Lamb, OptimizerKind::NovoGrad}) {
            std::vector<std::vector<float>> results;
            for (int run = 0; run < 2; ++run) {
                DeviceBuffer params = to_device(*gpu, initial);
                const std::unique_ptr<optim::Optimizer> optimizer =
                    gpu->optimizer(spec_for(kind), mixed_segments());
                for (int step = 0; step < 2; ++step)
                    optimizer->step(params.span(),
                                    std::span<const float>(gpu_grads.data(), kBufferFloats), 0.1);
                results.push_back(to_host(*gpu, params.data(), kBufferFloats));
            }
            QVERIFY(results[0] == results[1]);
        }
    }
};

QTEST_APPLESS_MAIN(TestFusedOptimizers)
#include "test_fused_optimizers.moc"
