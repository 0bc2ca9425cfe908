// Replica::prepare, what lets a GPU run allocate nothing once its collectives start: after it,
// training and evaluation at the prepared batch sizes make no kernel and allocate no memory (a
// backend that counts both says so, and counts a size that was not prepared), and a prepared
// replica computes exactly what an unprepared one does. On the CPU backend: what is checked is
// the engine's side (which kernels a step asks for), the same whatever the backend.

#include <QtTest>

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "data/batch_loader.h"
#include "error.h"
#include "forwarding_cpu_backend.h"
#include "gpu_test_support.h"
#include "train/replica.h"

using namespace scalelab;
using testing::random_values;

namespace {

constexpr int kBatch = 8;
const Shape kImage{1, 1, 28, 28};

// The CPU backend, counting what makes memory: allocate(), input_stage() and every kernel
// factory.
class CountingBackend final : public testing::ForwardingCpuBackend {
  public:
    explicit CountingBackend(int* made) : made_(made) {}
    std::string name() const override { return "counting cpu"; }

    DeviceBuffer allocate(std::size_t floats) override {
        ++*made_;
        return ForwardingCpuBackend::allocate(floats);
    }
    std::unique_ptr<InputStage> input_stage(std::size_t floats) override {
        ++*made_;
        return ForwardingCpuBackend::input_stage(floats);
    }
    std::unique_ptr<Conv2dKernel> conv2d(const Conv2dConfig& c, const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::conv2d(c, x);
    }
    std::unique_ptr<LinearKernel> linear(const LinearConfig& c, const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::linear(c, x);
    }
    std::unique_ptr<BatchNormKernel> batch_norm(const BatchNormConfig& c, const TensorDesc& x,
                                                bool training) override {
        ++*made_;
        return ForwardingCpuBackend::batch_norm(c, x, training);
    }
    std::unique_ptr<SyncBatchNormKernel> sync_batch_norm(const BatchNormConfig& c,
                                                         const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::sync_batch_norm(c, x);
    }
    std::unique_ptr<ReluKernel> relu(const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::relu(x);
    }
    std::unique_ptr<PoolKernel> pool(const PoolConfig& c, const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::pool(c, x);
    }
    std::unique_ptr<DropoutKernel> dropout(const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::dropout(x);
    }
    std::unique_ptr<AddKernel> add(const TensorDesc& a, const TensorDesc& b) override {
        ++*made_;
        return ForwardingCpuBackend::add(a, b);
    }
    std::unique_ptr<ReorderKernel> to_plain(const TensorDesc& x) override {
        ++*made_;
        return ForwardingCpuBackend::to_plain(x);
    }
    std::unique_ptr<SoftmaxCrossEntropyKernel> softmax_cross_entropy(const TensorDesc& logits,
                                                                     float smoothing) override {
        ++*made_;
        return ForwardingCpuBackend::softmax_cross_entropy(logits, smoothing);
    }
    std::unique_ptr<optim::Optimizer> optimizer(
        const RunSpec& spec, std::vector<optim::ParamSegment> segments) override {
        ++*made_;
        return ForwardingCpuBackend::optimizer(spec, std::move(segments));
    }

  private:
    int* made_;
};

data::Batch batch_of(int size, std::uint32_t seed) {
    data::Batch b;
    b.size = size;
    b.images = random_values(std::size_t(size) * kImage.per_sample(), seed, 2.0f);
    for (int s = 0; s < size; ++s)
        b.labels.push_back(int(seed + std::uint32_t(s)) % 10);
    return b;
}

RunSpec spec_for(const QString& model) {
    RunSpec spec;
    spec.model = model.toStdString();
    spec.width = 1;
    spec.batch = kBatch;
    spec.seed = 11;
    spec.lr = 0.05;
    return spec;
}

std::vector<float> host_copy(Replica& replica, std::span<const float> device) {
    std::vector<float> host(device.size());
    if (!device.empty())
        replica.backend().download(device.data(), host);
    return host;
}

void add_models() {
    QTest::addColumn<QString>("model");
    QTest::newRow("cnn") << "cnn";
    QTest::newRow("resnet8 (batch norm, residual adds)") << "resnet8";
    QTest::newRow("wrn k=1 (dropout)") << "wrn";
}

}  // namespace

class ReplicaPrepare : public QObject {
    Q_OBJECT

  private slots:
    void after_prepare_steps_make_nothing_data() { add_models(); }

    void after_prepare_steps_make_nothing() {
        QFETCH(QString, model);
        int made = 0;
        Replica replica(spec_for(model), kImage, std::make_unique<CountingBackend>(&made));
        const std::vector<int> train_sizes{kBatch, 3};
        const std::vector<int> eval_sizes{kBatch, 5};
        replica.prepare(train_sizes, eval_sizes);
        const int prepared = made;

        std::int64_t step = 0;
        for (int size : train_sizes) {
            replica.forward(batch_of(size, std::uint32_t(size)), ++step);
            replica.backward(1.0f / float(size));
            replica.update(0.05);
        }
        for (int size : eval_sizes)
            replica.evaluate(batch_of(size, 7));
        QCOMPARE(made, prepared);

        // A size that was not prepared makes its kernels: the count sees them.
        replica.evaluate(batch_of(4, 7));
        QVERIFY(made > prepared);
    }

    void prepare_changes_nothing_a_step_computes_data() { add_models(); }

    void prepare_changes_nothing_a_step_computes() {
        QFETCH(QString, model);
        const RunSpec spec = spec_for(model);
        Replica plain(spec, kImage, std::make_unique<cpu::CpuBackend>(1));
        Replica prepared(spec, kImage, std::make_unique<cpu::CpuBackend>(1));
        prepared.prepare(std::vector<int>{kBatch, 2}, std::vector<int>{kBatch, 3});
        for (std::int64_t step = 1; step <= 2; ++step) {
            const data::Batch batch = batch_of(kBatch, std::uint32_t(step));
            const StepResult a = plain.forward(batch, step);
            const StepResult b = prepared.forward(batch, step);
            QCOMPARE(b.loss_sum, a.loss_sum);
            plain.backward(1.0f / kBatch);
            prepared.backward(1.0f / kBatch);
            plain.update(spec.lr);
            prepared.update(spec.lr);
        }
        QCOMPARE(host_copy(prepared, prepared.model().params()),
                 host_copy(plain, plain.model().params()));
        QCOMPARE(host_copy(prepared, prepared.model().state()),
                 host_copy(plain, plain.model().state()));
        const data::Batch test = batch_of(3, 99);
        QCOMPARE(prepared.evaluate(test).loss_sum, plain.evaluate(test).loss_sum);
    }

    void sizes_the_input_cannot_hold_are_refused() {
        Replica replica(spec_for("cnn"), kImage, std::make_unique<cpu::CpuBackend>(1));
        for (int size : {0, kBatch + 1}) {
            try {
                replica.prepare(std::vector<int>{size}, {});
                QFAIL(qPrintable(QString("size %1 was accepted").arg(size)));
            } catch (const Error& e) {
                QCOMPARE(e.kind(), ErrorKind::Internal);
                QVERIFY2(QString(e.what()).contains(QString("batches of %1 samples").arg(size)),
                         e.what());
            }
        }
    }

    void batch_sizes_are_the_full_batch_and_the_rest() {
        QCOMPARE(data::batch_sizes(10, 4, false), (std::vector<int>{4, 2}));
        QCOMPARE(data::batch_sizes(8, 4, false), (std::vector<int>{4}));
        QCOMPARE(data::batch_sizes(3, 4, false), (std::vector<int>{3}));
        QCOMPARE(data::batch_sizes(10, 4, true), (std::vector<int>{4}));
        QCOMPARE(data::batch_sizes(3, 4, true), (std::vector<int>{}));
    }
};

QTEST_APPLESS_MAIN(ReplicaPrepare)
#include "test_replica_prepare.moc"
