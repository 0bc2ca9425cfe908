// The fused optimisers against the CPU ones (optim::make_optimizer): every optimiser in several
// configurations, over a segment layout that mixes weights, biases and batch-norm scales/shifts
// with gaps between segments, three steps at changing learning rates from the same random
// parameters and gradients; after every step the parameters compared and the gaps untouched.
//  - On the host, without a GPU: the fused optimisers' own code (their formulas, coefficients
//    and passes, fused_*.h) run float after float (HostPasses). The elementwise ones give the CPU
//    optimisers' bits exactly; those with norms within 1e-6, their norms being added in another
//    order.
//  - On the GPU (Backend::optimizer of the CUDA backend): the same within a relative error of
//    1e-5, and the norms' fixed order gives the same bits twice. These skip with the reason
//    where no GPU can be used.
// Also checked without a GPU: the chunk table the passes run over covers every segment exactly.

#include <QtTest>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/module/fused_adamw.h"
#include "backend/cuda/module/fused_lamb.h"
#include "backend/cuda/module/fused_lars.h"
#include "backend/cuda/module/fused_novograd.h"
#include "backend/cuda/module/fused_optimizer_config.h"
#include "backend/cuda/module/fused_sgd.h"
#include "backend/cuda/module/optimizer_chunks.h"
#include "backend/gpu_runtime.h"
#include "error.h"
#include "gpu_test_support.h"
#include "host_fused_passes.h"
#include "optim/make_optimizer.h"
#include "train/run_spec.h"

using namespace scalelab;
using namespace scalelab::testing;

namespace {

// The GPU's error bound; on the host, exactly the CPU's bits without norms, kNormTolerance with.
constexpr double kGpuTolerance = 1e-5;
constexpr double kNormTolerance = 1e-6;
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

// A fused optimiser under test with its parameters, from `initial`.
class FusedRun {
  public:
    virtual ~FusedRun() = default;
    virtual std::string_view name() const = 0;
    // One step with these gradients; returns the parameters after it.
    virtual std::vector<float> step(std::span<const float> grads, double lr) = 0;
};

// On the GPU: the backend's optimiser (Backend::optimizer), whose steps run on the backend's
// stream, in order with its uploads and downloads.
class GpuFusedRun final : public FusedRun {
  public:
    GpuFusedRun(const RunSpec& spec, const std::vector<float>& initial)
        : gpu_(make_gpu_backend({.gpu = 0})),
          params_(to_device(*gpu_, initial)),
          grads_(gpu_->allocate(initial.size())),
          optimizer_(gpu_->optimizer(spec, mixed_segments())) {}

    std::string_view name() const override { return optimizer_->name(); }
    std::vector<float> step(std::span<const float> grads, double lr) override {
        gpu_->upload(grads, grads_.data());
        optimizer_->step(params_.span(), std::span<const float>(grads_.data(), grads.size()), lr);
        return to_host(*gpu_, params_.data(), grads.size());
    }

  private:
    std::unique_ptr<Backend> gpu_;
    DeviceBuffer params_;
    DeviceBuffer grads_;
    std::unique_ptr<optim::Optimizer> optimizer_;
};

// The fused optimiser of each config, its passes on the host.
struct MakeHostFused {
    std::vector<optim::ParamSegment> segments;

    std::unique_ptr<optim::Optimizer> operator()(const optim::SgdConfig& config) const {
        return std::make_unique<cuda::FusedSgd<HostPasses>>(segments, config, HostContext{});
    }
    std::unique_ptr<optim::Optimizer> operator()(const optim::LarsConfig& config) const {
        return std::make_unique<cuda::FusedLars<HostPasses>>(segments, config, HostContext{});
    }
    std::unique_ptr<optim::Optimizer> operator()(const optim::LambConfig& config) const {
        return std::make_unique<cuda::FusedLamb<HostPasses>>(segments, config, HostContext{});
    }
    std::unique_ptr<optim::Optimizer> operator()(const optim::NovoGradConfig& config) const {
        return std::make_unique<cuda::FusedNovoGrad<HostPasses>>(segments, config, HostContext{});
    }
    std::unique_ptr<optim::Optimizer> operator()(const optim::AdamWConfig& config) const {
        return std::make_unique<cuda::FusedAdamW<HostPasses>>(segments, config, HostContext{});
    }
};

// On the host: the fused optimiser's own code, made for the spec as the GPU backend makes it.
class HostFusedRun final : public FusedRun {
  public:
    HostFusedRun(const RunSpec& spec, const std::vector<float>& initial)
        : params_(initial),
          optimizer_(cuda::with_optimizer_config(spec, MakeHostFused{mixed_segments()})) {}

    std::string_view name() const override { return optimizer_->name(); }
    std::vector<float> step(std::span<const float> grads, double lr) override {
        optimizer_->step(params_, grads, lr);
        return params_;
    }

  private:
    std::vector<float> params_;
    std::unique_ptr<optim::Optimizer> optimizer_;
};

// Three steps of the CPU optimiser and a fused one (Run: GpuFusedRun or HostFusedRun) for
// `config` from the same state; records a test failure at the first step whose parameters differ
// by more than `tolerance` or that wrote into a gap.
template <class Run>
void compare_with_cpu(const Config& config, double tolerance) {
    const std::vector<optim::ParamSegment> segments = mixed_segments();
    const std::vector<std::size_t> gaps = gap_indices();
    const std::vector<float> initial = random_values(kBufferFloats, 11);
    std::vector<float> cpu_params = initial;

    Run fused(config.spec, initial);
    const std::unique_ptr<optim::Optimizer> cpu_optimizer =
        optim::make_optimizer(config.spec, segments);
    QVERIFY(fused.name() == cpu_optimizer->name());

    const double lrs[] = {0.3, 0.1, 0.6};
    for (int step = 0; step < 3; ++step) {
        const std::vector<float> grads =
            random_values(kBufferFloats, 100 + static_cast<std::uint32_t>(step), 0.1f);
        cpu_optimizer->step(cpu_params, grads, lrs[step]);
        const std::vector<float> got = fused.step(grads, lrs[step]);
        const double error = relative_error(got, cpu_params);
        QVERIFY2(error <= tolerance, qPrintable(QString("%1, step %2: relative error %3")
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

template <class Run>
void compare_all(const std::vector<Config>& configs, double tolerance) {
    for (const Config& config : configs) {
        compare_with_cpu<Run>(config, tolerance);
        if (QTest::currentTestFailed())
            return;
    }
}

// SGD: plain, with momentum and decay not on bias/BN, Nesterov with decay everywhere.
std::vector<Config> sgd_configs() {
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
    return configs;
}

// LARS: momentum, LARC with Nesterov, no momentum with bias/BN adapted.
std::vector<Config> lars_configs() {
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
    return configs;
}

// LAMB: decay not on bias/BN, a trust clamp that acts, one above the ratios.
std::vector<Config> lamb_configs() {
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
    return configs;
}

// NovoGrad: with and without gradient averaging, bias/BN per float and adapted.
std::vector<Config> novograd_configs() {
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
    return configs;
}

// AdamW: with decay (not on bias/BN) and without.
std::vector<Config> adamw_configs() {
    std::vector<Config> configs;
    RunSpec spec = spec_for(OptimizerKind::AdamW);
    spec.weight_decay = 0.01;
    spec.decay_norm_and_bias = false;
    configs.push_back({"decay not on bias/BN", spec});
    spec.weight_decay = 0;
    configs.push_back({"no decay", spec});
    return configs;
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

    // On the host: the elementwise optimisers give the CPU's bits exactly.
    void sgdFormulasMatchCpu() { compare_all<HostFusedRun>(sgd_configs(), 0); }
    void larsFormulasMatchCpu() { compare_all<HostFusedRun>(lars_configs(), kNormTolerance); }
    void lambFormulasMatchCpu() { compare_all<HostFusedRun>(lamb_configs(), kNormTolerance); }
    void novogradFormulasMatchCpu() {
        compare_all<HostFusedRun>(novograd_configs(), kNormTolerance);
    }
    void adamwFormulasMatchCpu() { compare_all<HostFusedRun>(adamw_configs(), 0); }

    void sgdMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        compare_all<GpuFusedRun>(sgd_configs(), kGpuTolerance);
    }
    void larsMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        compare_all<GpuFusedRun>(lars_configs(), kGpuTolerance);
    }
    void lambMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        compare_all<GpuFusedRun>(lamb_configs(), kGpuTolerance);
    }
    void novogradMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        compare_all<GpuFusedRun>(novograd_configs(), kGpuTolerance);
    }
    void adamwMatchesCpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        compare_all<GpuFusedRun>(adamw_configs(), kGpuTolerance);
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
