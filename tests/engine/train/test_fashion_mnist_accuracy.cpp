// The accuracy bar: cnn on Fashion-MNIST reaches at least 0.89 test accuracy after 2
// epochs at batch 128 (lr 0.05, momentum 0.9, as the PyTorch anchor trains it), on CPU devices
// and, where there is one, on one GPU (skipped with the reason where none can be used).

#include <QtTest>
#include <filesystem>

#include "data/load.h"
#include "gpu_test_support.h"
#include "recording_sink.h"
#include "train/trainer.h"

using namespace scalelab;

class FashionMnistAccuracy : public QObject {
    Q_OBJECT

  private slots:
    void cnn_reaches_089_in_two_epochs() { check_two_epochs(DeviceKind::Cpu); }

    void cnn_reaches_089_in_two_epochs_on_one_gpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        check_two_epochs(DeviceKind::Gpu);
    }

  private:
    static void check_two_epochs(DeviceKind device) {
        const std::string dir = data::default_data_dir("fashion-mnist");
        if (!std::filesystem::exists(dir))
            QSKIP("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)");
        const auto data = data::load_dataset({"fashion-mnist", dir, {}});
        RunSpec spec;  // the defaults: cnn, batch 128, lr 0.05, momentum 0.9, 2 epochs, 1 device
        spec.device = device;
        spec.threads = 0;
        testing::RecordingSink sink;
        const RunEnd end = Trainer(spec, data, sink).run();
        QVERIFY2(end.status == RunStatus::Finished, end.message.c_str());
        QCOMPARE(int(sink.epochs.size()), 2);
        qInfo("test accuracy after 2 epochs: %.4f (%.1f s training)",
              sink.epochs.back().val_accuracy,
              sink.epochs[0].epoch_seconds + sink.epochs[1].epoch_seconds);
        QVERIFY2(sink.epochs.back().val_accuracy >= 0.89,
                 qPrintable(QString::number(sink.epochs.back().val_accuracy)));
    }
};

QTEST_APPLESS_MAIN(FashionMnistAccuracy)
#include "test_fashion_mnist_accuracy.moc"
