// RunSpec::validate(): one mistake at a time, each reported alone and in exactly the words
// docs/errors.md gives for it (the entries E-SPEC-*).

#include <QtTest>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "train/run_spec.h"

using namespace scalelab;

namespace {

QString joined(const std::vector<std::string>& problems) {
    QStringList lines;
    for (const std::string& problem : problems)
        lines.append(QString::fromStdString(problem));
    return lines.join(QLatin1Char('\n'));
}

struct Mistake {
    const char* name;
    std::function<void(RunSpec&)> make;
    std::string message;
};

RunSpec synthetic_spec() {
    RunSpec spec;
    spec.dataset = "synthetic";
    return spec;
}

const std::vector<Mistake>& mistakes() {
    static const std::vector<Mistake> all{
        {"model", [](RunSpec& s) { s.model = "vgg"; },
         "model 'vgg' is unknown: choose one of mlp, cnn, resnet8, resnet20, wrn"},
        {"width", [](RunSpec& s) { s.width = 0; },
         "width must be a whole number from 1 to 64 (got 0)"},
        {"dataset", [](RunSpec& s) { s.dataset = "imagenet"; },
         "dataset 'imagenet' is unknown: choose one of fashion-mnist, mnist, cifar10, synthetic"},
        {"synthetic_train",
         [](RunSpec& s) {
             s = synthetic_spec();
             s.synthetic_train = 0;
         },
         "synthetic_train must be a whole number of at least 1 (got 0)"},
        {"synthetic_test",
         [](RunSpec& s) {
             s = synthetic_spec();
             s.synthetic_test = 0;
         },
         "synthetic_test must be a whole number of at least 1 (got 0)"},
        {"synthetic_channels",
         [](RunSpec& s) {
             s = synthetic_spec();
             s.synthetic_channels = 2;
         },
         "synthetic_channels must be 1 or 3 (got 2)"},
        {"synthetic_size 30",
         [](RunSpec& s) {
             s = synthetic_spec();
             s.synthetic_size = 30;
         },
         "synthetic_size must be a multiple of 4 (got 30)"},
        // The generator needs 8 pixels: 4 would pass here and fail when the data is made.
        {"synthetic_size 4",
         [](RunSpec& s) {
             s = synthetic_spec();
             s.synthetic_size = 4;
         },
         "synthetic_size must be a whole number from 8 to 256 (got 4)"},
        {"train_subset", [](RunSpec& s) { s.train_subset = -1; },
         "train_subset must be a whole number of at least 0 (got -1)"},
        {"test_subset", [](RunSpec& s) { s.test_subset = -1; },
         "test_subset must be a whole number of at least 0 (got -1)"},
        {"epochs", [](RunSpec& s) { s.epochs = 0; },
         "epochs must be a whole number of at least 1 (got 0)"},
        {"batch", [](RunSpec& s) { s.batch = 70000; },
         "batch must be a whole number from 1 to 65536 (got 70000)"},
        {"devices", [](RunSpec& s) { s.devices = 17; },
         "devices must be a whole number from 1 to 16 (got 17)"},
        {"gpus on cpu", [](RunSpec& s) { s.gpus = {0}; },
         "gpus lists GPUs for a run on CPU devices: set device to gpu, or leave gpus empty"},
        {"gpus count",
         [](RunSpec& s) {
             s.device = DeviceKind::Gpu;
             s.devices = 2;
             s.gpus = {1};
         },
         "gpus lists 1 GPU(s) for 2 device(s): list one GPU per device, or leave gpus empty for "
         "the first ones"},
        {"accumulation", [](RunSpec& s) { s.accumulation = 0; },
         "accumulation must be a whole number from 1 to 1024 (got 0)"},
        {"collective_timeout_s", [](RunSpec& s) { s.collective_timeout_s = 0.5; },
         "collective_timeout_s must be a number in [1, 86400] (got 0.5)"},
        {"collective_timeout_s nan", [](RunSpec& s) { s.collective_timeout_s = NAN; },
         "collective_timeout_s must be a number in [1, 86400] (got nan)"},
        {"bucket_mb", [](RunSpec& s) { s.bucket_mb = 0; },
         "bucket_mb must be a number in (0, 1024] (got 0)"},
        {"first_bucket_mb", [](RunSpec& s) { s.first_bucket_mb = 2048; },
         "first_bucket_mb must be a number in (0, 1024] (got 2048)"},
        {"lr", [](RunSpec& s) { s.lr = 0; }, "lr must be a number above 0 (got 0)"},
        // min_lr (0 by default) is not reported against an lr that is already wrong.
        {"negative lr", [](RunSpec& s) { s.lr = -1; }, "lr must be a number above 0 (got -1)"},
        {"momentum", [](RunSpec& s) { s.momentum = 1.5; },
         "momentum must be a number in [0, 1) (got 1.5)"},
        {"nesterov",
         [](RunSpec& s) {
             s.nesterov = true;
             s.momentum = 0;
         },
         "nesterov needs a momentum above 0"},
        {"weight_decay", [](RunSpec& s) { s.weight_decay = -1e-4; },
         "weight_decay must be a number of at least 0 (got -0.0001)"},
        {"label_smoothing", [](RunSpec& s) { s.label_smoothing = 1; },
         "label_smoothing must be a number in [0, 1) (got 1)"},
        {"gamma", [](RunSpec& s) { s.gamma = 0; }, "gamma must be a number in (0, 1] (got 0)"},
        {"step_epochs", [](RunSpec& s) { s.step_epochs = 0; },
         "step_epochs must be a whole number of at least 1 (got 0)"},
        {"no milestones", [](RunSpec& s) { s.schedule = ScheduleKind::MultiStep; },
         "the multistep schedule needs milestones (epochs, e.g. 30,60)"},
        {"milestones out of order",
         [](RunSpec& s) {
             s.schedule = ScheduleKind::MultiStep;
             s.milestones = {60, 30};
         },
         "milestones must be strictly increasing"},
        {"milestone 0",
         [](RunSpec& s) {
             s.schedule = ScheduleKind::MultiStep;
             s.milestones = {0, 30};
         },
         "milestones must each be a whole number of at least 1 (got 0)"},
        {"min_lr", [](RunSpec& s) { s.min_lr = 0.1; }, "min_lr must be at most lr (0.05, got 0.1)"},
        {"warmup_length", [](RunSpec& s) { s.warmup_length = -1; },
         "warmup_length must be a number of at least 0 (got -1)"},
        {"fractional warm-up steps",
         [](RunSpec& s) {
             s.warmup_unit = WarmupUnit::Steps;
             s.warmup_length = 2.5;
         },
         "a warm-up in steps must be a whole number"},
        {"warm-up longer than the run",
         [](RunSpec& s) {
             s.epochs = 2;
             s.warmup_length = 2.5;
         },
         "the warm-up (2.5 epochs) is longer than the run (2 epochs): shorten it or train longer"},
        {"per-epoch warm-up in steps",
         [](RunSpec& s) {
             s.warmup = WarmupKind::PerEpoch;
             s.warmup_unit = WarmupUnit::Steps;
         },
         "the per-epoch warm-up is measured in epochs: set warmup_unit to epochs "
         "(--warmup-epochs)"},
        {"reference_batch", [](RunSpec& s) { s.reference_batch = 0; },
         "reference_batch must be a whole number of at least 1 (got 0)"},
        {"beta1", [](RunSpec& s) { s.beta1 = 1; }, "beta1 must be a number in [0, 1) (got 1)"},
        {"beta2", [](RunSpec& s) { s.beta2 = -0.1; },
         "beta2 must be a number in [0, 1) (got -0.1)"},
        {"eps", [](RunSpec& s) { s.eps = 0; }, "eps must be a number in (0, 1) (got 0)"},
        {"trust_coefficient", [](RunSpec& s) { s.trust_coefficient = 0; },
         "trust_coefficient must be a number in (0, 1] (got 0)"},
        {"trust_clamp", [](RunSpec& s) { s.trust_clamp = -1; },
         "trust_clamp must be a number of at least 0 (got -1)"},
        {"poly_power", [](RunSpec& s) { s.poly_power = 0; },
         "poly_power must be a number in (0, 10] (got 0)"},
        {"ghost_batch", [](RunSpec& s) { s.ghost_batch = 3; },
         "ghost_batch must be 0 (off) or divide the batch per device (128)"},
        {"ghost_batch with sync_bn",
         [](RunSpec& s) {
             s.ghost_batch = 32;
             s.sync_bn = true;
         },
         "ghost_batch and sync_bn cannot be combined: choose one"},
        {"zero_init_residual", [](RunSpec& s) { s.zero_init_residual = true; },
         "zero_init_residual needs resnet8 or resnet20 (wrn's last batch norm feeds a ReLU, "
         "whose gradient at 0 would stop its blocks from learning; mlp and cnn have no "
         "residual blocks)"},
        {"noise_scale_beta", [](RunSpec& s) { s.noise_scale_beta = 1; },
         "noise_scale_beta must be a number in [0, 1) (got 1)"},
        {"targets",
         [](RunSpec& s) {
             s.targets = {0.9, 1.5};
         },
         "targets must each be a number in (0, 1] (got 1.5)"},
        {"warmup_start_factor", [](RunSpec& s) { s.warmup_start_factor = 2; },
         "warmup_start_factor must be a number in [0, 1] (got 2)"},
        {"threads", [](RunSpec& s) { s.threads = 2000; },
         "threads must be a whole number from 0 to 1024 (got 2000)"},
        {"target_accuracy", [](RunSpec& s) { s.target_accuracy = 75; },
         "target_accuracy must be a number in [0, 1] (got 75)"},
        {"patience", [](RunSpec& s) { s.patience = 0; },
         "patience must be a whole number of at least 1 (got 0)"},
    };
    return all;
}

}  // namespace

class TestRunSpecValidate : public QObject {
    Q_OBJECT

  private slots:
    void valid_specs_have_no_problems() {
        QCOMPARE(joined(RunSpec{}.validate()), QString());
        QCOMPARE(joined(synthetic_spec().validate()), QString());
    }

    void each_mistake_gets_exactly_its_message_data() {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < mistakes().size(); ++i)
            QTest::newRow(mistakes()[i].name) << int(i);
    }
    void each_mistake_gets_exactly_its_message() {
        QFETCH(int, index);
        const Mistake& mistake = mistakes()[std::size_t(index)];
        RunSpec spec;
        mistake.make(spec);
        QCOMPARE(joined(spec.validate()), QString::fromStdString(mistake.message));
    }

    // A 50 MB model name from a config file was echoed whole, escape sequences and all.
    void a_long_or_strange_name_is_quoted_cut() {
        RunSpec spec;
        spec.model = std::string(50 << 20, 'm');
        spec.dataset = "x\x1b[2J";
        QCOMPARE(joined(spec.validate()),
                 "model '" + QString(60, 'm') +
                     "...' (52428800 bytes) is unknown: choose one of mlp, cnn, resnet8, "
                     "resnet20, wrn\ndataset 'x\\x1b[2J' is unknown: choose one of "
                     "fashion-mnist, mnist, cifar10, synthetic");
    }

    void every_problem_is_reported_at_once() {
        RunSpec spec;
        for (const Mistake& mistake : mistakes())
            if (std::string(mistake.name).rfind("synthetic", 0) != 0)
                mistake.make(spec);
        QVERIFY2(spec.validate().size() >= 30, std::to_string(spec.validate().size()).c_str());
    }
};

QTEST_APPLESS_MAIN(TestRunSpecValidate)
#include "test_run_spec_validate.moc"
