// A replica's two ways of getting ready ahead of its work, on the CPU backend: what is checked
// is the engine's side (which kernels and copies a step asks for), the same whatever the backend.
//  - Replica::prepare, what lets a GPU run allocate nothing once its collectives start: after
//    it, training and evaluation at the prepared batch sizes make no kernel and allocate no
//    memory (a backend that counts both says so, and counts a size that was not prepared), a
//    prepared replica computes exactly what an unprepared one does, and prepare returns once
//    its work is done (a backend that logs its loss's calls and its fences says so).
//  - Replica::stage, what lets a GPU copy the next batch while the last step's work runs: the
//    forward of a staged batch copies nothing more and computes what an unstaged one does, and
//    any other upload in between takes the stage back, so that the staged batch is copied again.

#include <QtTest>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "data/batch_loader.h"
#include "error.h"
#include "forwarding_cpu_backend.h"
#include "gpu_test_support.h"
#include "logged_calls.h"
#include "train/replica.h"

using namespace scalelab;
using testing::random_values;

namespace {

constexpr int kBatch = 8;
const Shape kImage{1, 1, 28, 28};

// The CPU backend's input stage, counting its copies.
class CountingInputStage final : public InputStage {
  public:
    CountingInputStage(std::unique_ptr<InputStage> stage, int* copies)
        : stage_(std::move(stage)), copies_(copies) {}
    float* stage(std::span<const float> host) override {
        ++*copies_;
        return stage_->stage(host);
    }

  private:
    std::unique_ptr<InputStage> stage_;
    int* copies_;
};

class CopyCountingBackend final : public testing::ForwardingCpuBackend {
  public:
    explicit CopyCountingBackend(int* copies) : copies_(copies) {}
    std::unique_ptr<InputStage> input_stage(std::size_t floats) override {
        return std::make_unique<CountingInputStage>(ForwardingCpuBackend::input_stage(floats),
                                                    copies_);
    }

  private:
    int* copies_;
};

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

// The CPU backend, logging its loss's calls and its fences' marks and waits (logged_calls.h).
class FenceLoggingBackend final : public testing::LossLoggingBackend {
  public:
    using LossLoggingBackend::LossLoggingBackend;
    std::unique_ptr<Fence> make_fence() override {
        return std::make_unique<testing::LoggedFence>(log());
    }
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

// The loss sum of a training forward of `batch`.
double trained_loss(Replica& replica, const data::Batch& batch, std::int64_t step) {
    replica.forward(batch, step);
    return replica.result().loss_sum;
}

double evaluated_loss(Replica& replica, const data::Batch& batch) {
    replica.evaluate(batch);
    return replica.result().loss_sum;
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

class ReplicaTest : public QObject {
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
            evaluated_loss(replica, batch_of(size, 7));
        QCOMPARE(made, prepared);

        // A size that was not prepared makes its kernels: the count sees them.
        evaluated_loss(replica, batch_of(4, 7));
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
            QCOMPARE(trained_loss(prepared, batch, step), trained_loss(plain, batch, step));
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
        QCOMPARE(evaluated_loss(prepared, test), evaluated_loss(plain, test));
    }

    void prepare_returns_with_its_work_done_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("evaluates");
        QTest::addColumn<QStringList>("calls");
        const QStringList train{"forward", "backward", "result"};
        const QStringList evaluate{"forward", "result"};
        const QStringList done{"fence mark", "fence wait"};
        // mlp has no running statistics to put back: nothing but the fence follows its backward.
        QTest::newRow("mlp, training only") << "mlp" << false << train + done;
        QTest::newRow("mlp, training and evaluation") << "mlp" << true << train + evaluate + done;
        QTest::newRow("resnet8, training only") << "resnet8" << false << train + done;
    }
    // On a GPU the broadcast of the initial parameters that follows prepare runs on a stream
    // that does not wait for the backend's: prepare waits for its own work (a fence marked after
    // it), or that broadcast could overwrite parameters its last backward still reads.
    void prepare_returns_with_its_work_done() {
        QFETCH(QString, model);
        QFETCH(bool, evaluates);
        QFETCH(QStringList, calls);
        std::vector<std::string> log;
        Replica replica(spec_for(model), kImage, std::make_unique<FenceLoggingBackend>(log));
        replica.prepare(std::vector<int>{kBatch},
                        evaluates ? std::vector<int>{3} : std::vector<int>{});
        QStringList logged;
        for (const std::string& call : log)
            logged << QString::fromStdString(call);
        QCOMPARE(logged, calls);
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

    void a_staged_batch_is_copied_once_and_trains_as_an_unstaged_one() {
        const RunSpec spec = spec_for("resnet8");
        int copies = 0;
        Replica staged(spec, kImage, std::make_unique<CopyCountingBackend>(&copies));
        Replica plain(spec, kImage, std::make_unique<cpu::CpuBackend>(1));
        const data::Batch first = batch_of(kBatch, 1), second = batch_of(kBatch, 2);
        staged.stage(first);
        QCOMPARE(copies, 1);
        const double staged_loss = trained_loss(staged, first, 1);
        QCOMPARE(copies, 1);  // the forward used the copy the stage made
        QCOMPARE(staged_loss, trained_loss(plain, first, 1));
        // The next batch staged while the step's backward and update are still to come, as a
        // training step does it.
        staged.backward(1.0f / kBatch);
        plain.backward(1.0f / kBatch);
        staged.stage(second);
        staged.update(spec.lr);
        plain.update(spec.lr);
        QCOMPARE(copies, 2);
        QCOMPARE(trained_loss(staged, second, 2), trained_loss(plain, second, 2));
        QCOMPARE(copies, 2);
        QCOMPARE(host_copy(staged, staged.model().params()),
                 host_copy(plain, plain.model().params()));
    }

    void a_stage_serves_one_forward() {
        // A loader hands out each batch in the same object, refilled (BatchLoader::next): a
        // forward of that object after the one the stage served copies its images anew. Had it
        // used the stage's copy again, it would train on the last batch's images.
        const RunSpec spec = spec_for("cnn");
        int copies = 0;
        Replica staged(spec, kImage, std::make_unique<CopyCountingBackend>(&copies));
        Replica plain(spec, kImage, std::make_unique<cpu::CpuBackend>(1));
        // The reference replica is given each batch in an object of its own.
        const data::Batch first = batch_of(kBatch, 3), second = batch_of(kBatch, 4);
        data::Batch batch = first;
        staged.stage(batch);
        QCOMPARE(trained_loss(staged, batch, 1), trained_loss(plain, first, 1));
        batch = second;
        staged.forward(batch, 2);
        plain.forward(second, 2);
        // The first layer's weight gradients are sums of input x output gradient: the images
        // show there, where the loss of a model at its start hardly depends on them.
        staged.backward(1.0f / kBatch);
        plain.backward(1.0f / kBatch);
        QCOMPARE(host_copy(staged, staged.model().grads()),
                 host_copy(plain, plain.model().grads()));
        QCOMPARE(copies, 2);
    }

    void another_upload_takes_the_stage_back() {
        // Evaluation, or a forward of another batch, between a stage and its forward: the CPU
        // backend's stage is one buffer, which they overwrite, so the staged batch is copied again.
        const RunSpec spec = spec_for("cnn");
        int copies = 0;
        Replica staged(spec, kImage, std::make_unique<CopyCountingBackend>(&copies));
        Replica plain(spec, kImage, std::make_unique<cpu::CpuBackend>(1));
        const data::Batch batch = batch_of(kBatch, 3), other = batch_of(kBatch, 4);
        staged.stage(batch);
        QCOMPARE(evaluated_loss(staged, other), evaluated_loss(plain, other));
        QCOMPARE(trained_loss(staged, batch, 1), trained_loss(plain, batch, 1));
        QCOMPARE(copies, 3);
        staged.stage(batch);
        QCOMPARE(trained_loss(staged, other, 2), trained_loss(plain, other, 2));
        QCOMPARE(trained_loss(staged, batch, 3), trained_loss(plain, batch, 3));
        QCOMPARE(copies, 6);
    }

    void a_result_needs_a_forward_of_its_own() {
        Replica replica(spec_for("mlp"), kImage, std::make_unique<cpu::CpuBackend>(1));
        QVERIFY_THROWS_EXCEPTION(Error, replica.result());
        const data::Batch batch = batch_of(kBatch, 5);
        replica.forward(batch, 1);
        const StepResult r = replica.result();
        QCOMPARE(r.size, kBatch);
        QVERIFY(r.loss_sum > 0);
        QVERIFY_THROWS_EXCEPTION(Error, replica.result());
        // An evaluation's result comes the same way, once.
        replica.evaluate(batch_of(3, 6));
        const StepResult e = replica.result();
        QCOMPARE(e.size, 3);
        QVERIFY(e.loss_sum > 0);
        QVERIFY_THROWS_EXCEPTION(Error, replica.result());
        // prepare leaves none pending either.
        replica.prepare(std::vector<int>{kBatch}, std::vector<int>{kBatch});
        QVERIFY_THROWS_EXCEPTION(Error, replica.result());
    }

    void batch_sizes_are_the_full_batch_and_the_rest() {
        QCOMPARE(data::batch_sizes(10, 4, false), (std::vector<int>{4, 2}));
        QCOMPARE(data::batch_sizes(8, 4, false), (std::vector<int>{4}));
        QCOMPARE(data::batch_sizes(3, 4, false), (std::vector<int>{3}));
        QCOMPARE(data::batch_sizes(10, 4, true), (std::vector<int>{4}));
        QCOMPARE(data::batch_sizes(3, 4, true), (std::vector<int>{}));
    }
};

QTEST_APPLESS_MAIN(ReplicaTest)
#include "test_replica.moc"
