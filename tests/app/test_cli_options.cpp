#include <QTemporaryDir>
#include <QtTest>

#include "backend/cpu/sgemm_peak.h"
#include "cli/bench_allreduce_options.h"
#include "cli/bench_options.h"
#include "cli/bench_sgemm_options.h"
#include "cli/flag_values.h"
#include "cli/lesson_options.h"
#include "cli/log_setup.h"
#include "cli/runs_options.h"
#include "cli/train_options.h"

using namespace scalelab::cli;

namespace {

QString joined(const std::vector<std::string>& problems) {
    QStringList lines;
    for (const auto& p : problems)
        lines.append(QString::fromStdString(p));
    return lines.join('\n');
}

// The one problem the words give; every problem, counted, when they give another number.
template <typename Parsed>
QString only_problem(const Parsed& parsed) {
    if (parsed.problems.size() != 1)
        return QStringLiteral("%1 problems: %2")
            .arg(parsed.problems.size())
            .arg(joined(parsed.problems));
    return QString::fromStdString(parsed.problems.front());
}

void write_file(const QString& path, const QByteArray& content) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
}

}  // namespace

class TestCliOptions : public QObject {
    Q_OBJECT

  private slots:
    void flags_map_onto_every_run_spec_field() {
        const auto parsed = parse_train_options({"--model",
                                                 "wrn",
                                                 "--width",
                                                 "4",
                                                 "--dataset",
                                                 "synthetic",
                                                 "--data",
                                                 "/d",
                                                 "--synthetic-train",
                                                 "100",
                                                 "--synthetic-test",
                                                 "50",
                                                 "--synthetic-channels",
                                                 "3",
                                                 "--synthetic-size",
                                                 "32",
                                                 "--augment",
                                                 "crop-flip",
                                                 "--epochs",
                                                 "3",
                                                 "--batch=256",
                                                 "--devices",
                                                 "4",
                                                 "--accumulation",
                                                 "2",
                                                 "--bucket-mb",
                                                 "50",
                                                 "--first-bucket-mb",
                                                 "0.5",
                                                 "--no-overlap",
                                                 "--sync-bn",
                                                 "--lr",
                                                 "1e-1",
                                                 "--momentum",
                                                 "0.8",
                                                 "--nesterov",
                                                 "--weight-decay",
                                                 "5e-4",
                                                 "--no-decay-norm-bias",
                                                 "--label-smoothing",
                                                 "0.1",
                                                 "--schedule",
                                                 "multistep",
                                                 "--gamma",
                                                 "0.5",
                                                 "--step-epochs",
                                                 "5",
                                                 "--milestones",
                                                 "30,60",
                                                 "--device",
                                                 "gpu",
                                                 "--gpus",
                                                 "2,0",
                                                 "--tf32",
                                                 "--deterministic",
                                                 "--collective-timeout-s",
                                                 "60",
                                                 "--min-lr",
                                                 "0.001",
                                                 "--warmup-steps",
                                                 "200",
                                                 "--warmup-start-factor",
                                                 "0.2",
                                                 "--seed",
                                                 "18446744073709551615",
                                                 "--threads",
                                                 "2",
                                                 "--target-accuracy",
                                                 "0.9",
                                                 "--patience",
                                                 "2",
                                                 "--metrics-out",
                                                 "m.jsonl",
                                                 "--log-level",
                                                 "debug"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        const TrainOptions& o = parsed.options;
        const scalelab::RunSpec& s = o.spec;
        QCOMPARE(s.model, std::string("wrn"));
        QCOMPARE(s.width, 4);
        QCOMPARE(s.dataset, std::string("synthetic"));
        QCOMPARE(s.data_dir, std::string("/d"));
        QCOMPARE(s.synthetic_train, 100);
        QCOMPARE(s.synthetic_test, 50);
        QCOMPARE(s.synthetic_channels, 3);
        QCOMPARE(s.synthetic_size, 32);
        QCOMPARE(s.augment, scalelab::Augmentation::CropFlip);
        QCOMPARE(s.epochs, 3);
        QCOMPARE(s.batch, 256);
        QCOMPARE(s.devices, 4);
        QCOMPARE(s.accumulation, 2);
        QCOMPARE(s.bucket_mb, 50.0);
        QCOMPARE(s.first_bucket_mb, 0.5);
        QVERIFY(!s.overlap);
        QVERIFY(s.sync_bn);
        QCOMPARE(s.lr, 0.1);
        QCOMPARE(s.momentum, 0.8);
        QVERIFY(s.nesterov);
        QCOMPARE(s.weight_decay, 5e-4);
        QVERIFY(!s.decay_norm_and_bias);
        QCOMPARE(s.label_smoothing, 0.1);
        QCOMPARE(s.schedule, scalelab::ScheduleKind::MultiStep);
        QCOMPARE(s.gamma, 0.5);
        QCOMPARE(s.step_epochs, 5);
        QCOMPARE(s.milestones, (std::vector<int>{30, 60}));
        QCOMPARE(s.device, scalelab::DeviceKind::Gpu);
        QCOMPARE(s.gpus, (std::vector<int>{2, 0}));
        QVERIFY(s.tf32);
        QVERIFY(s.deterministic);
        QCOMPARE(s.collective_timeout_s, 60.0);
        QCOMPARE(s.min_lr, 0.001);
        QCOMPARE(s.warmup_length, 200.0);
        QCOMPARE(s.warmup_unit, scalelab::WarmupUnit::Steps);
        QCOMPARE(s.warmup_start_factor, 0.2);
        QCOMPARE(s.seed, 18446744073709551615ull);
        QCOMPARE(s.threads, 2);
        QCOMPARE(s.target_accuracy, 0.9);
        QCOMPARE(s.patience, 2);
        QCOMPARE(o.metrics_out, std::string("m.jsonl"));
        QCOMPARE(o.log_level, std::string("debug"));
    }

    void large_batch_flags_map_onto_their_fields() {
        const auto parsed = parse_train_options({"--model",
                                                 "resnet8",
                                                 "--optimizer",
                                                 "lamb",
                                                 "--lr-scaling",
                                                 "sqrt",
                                                 "--reference-batch",
                                                 "512",
                                                 "--warmup",
                                                 "per-epoch",
                                                 "--warmup-epochs",
                                                 "3",
                                                 "--schedule",
                                                 "poly",
                                                 "--poly-power",
                                                 "0.5",
                                                 "--beta1",
                                                 "0.8",
                                                 "--beta2",
                                                 "0.99",
                                                 "--eps",
                                                 "1e-6",
                                                 "--trust-coefficient",
                                                 "0.02",
                                                 "--larc",
                                                 "--trust-clamp",
                                                 "10",
                                                 "--grad-averaging",
                                                 "--adapt-norm-bias",
                                                 "--zero-init-residual",
                                                 "--ghost-batch",
                                                 "16",
                                                 "--augment",
                                                 "assessment",
                                                 "--noise-scale-beta",
                                                 "0.9",
                                                 "--targets",
                                                 "0.8,0.875",
                                                 "--epochs",
                                                 "5"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        const scalelab::RunSpec& s = parsed.options.spec;
        QCOMPARE(s.optimizer, scalelab::OptimizerKind::Lamb);
        QCOMPARE(s.lr_scaling, scalelab::LrScaling::Sqrt);
        QCOMPARE(s.reference_batch, 512);
        QCOMPARE(s.warmup, scalelab::WarmupKind::PerEpoch);
        QCOMPARE(s.warmup_length, 3.0);
        QCOMPARE(s.warmup_unit, scalelab::WarmupUnit::Epochs);
        QCOMPARE(s.schedule, scalelab::ScheduleKind::Poly);
        QCOMPARE(s.poly_power, 0.5);
        QCOMPARE(s.beta1, 0.8);
        QCOMPARE(s.beta2, 0.99);
        QCOMPARE(s.eps, 1e-6);
        QCOMPARE(s.trust_coefficient, 0.02);
        QVERIFY(s.larc);
        QCOMPARE(s.trust_clamp, 10.0);
        QVERIFY(s.grad_averaging);
        QVERIFY(s.adapt_norm_and_bias);
        QVERIFY(s.zero_init_residual);
        QCOMPARE(s.ghost_batch, 16);
        QCOMPARE(s.augment, scalelab::Augmentation::Assessment);
        QCOMPARE(s.noise_scale_beta, 0.9);
        QCOMPARE(s.targets, (std::vector<double>{0.8, 0.875}));
        QVERIFY2(s.validate().empty(), qPrintable(joined(s.validate())));
    }

    void every_enum_value_is_accepted() {
        for (const char* v : {"sgd", "lars", "lamb", "novograd", "adamw"})
            QVERIFY2(parse_train_options({"--optimizer", v}).problems.empty(), v);
        for (const char* v : {"none", "linear", "sqrt"})
            QVERIFY2(parse_train_options({"--lr-scaling", v}).problems.empty(), v);
        for (const char* v : {"gradual", "per-epoch", "constant"})
            QVERIFY2(parse_train_options({"--warmup", v}).problems.empty(), v);
        for (const char* v : {"constant", "step", "multistep", "cosine", "poly", "exp"})
            QVERIFY2(parse_train_options({"--schedule", v}).problems.empty(), v);
        for (const char* v : {"none", "flip", "crop-flip", "assessment"})
            QVERIFY2(parse_train_options({"--augment", v}).problems.empty(), v);
        for (const char* v : {"cpu", "gpu"})
            QVERIFY2(parse_train_options({"--device", v}).problems.empty(), v);
        QCOMPARE(parse_train_options({"--schedule", "exp"}).options.spec.schedule,
                 scalelab::ScheduleKind::Exp);
        QCOMPARE(parse_train_options({"--optimizer=adamw"}).options.spec.optimizer,
                 scalelab::OptimizerKind::AdamW);
        QCOMPARE(parse_train_options({"--augment", "flip"}).options.spec.augment,
                 scalelab::Augmentation::Flip);
        // An empty list: no targets recorded.
        QVERIFY(parse_train_options({"--targets", ""}).options.spec.targets.empty());
    }

    void bad_enum_values_name_the_flag_and_the_choices_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("choices");
        QTest::newRow("optimizer") << "--optimizer"
                                   << "sgd|lars|lamb|novograd|adamw";
        QTest::newRow("lr-scaling") << "--lr-scaling"
                                    << "none|linear|sqrt";
        QTest::newRow("warmup") << "--warmup"
                                << "gradual|per-epoch|constant";
        QTest::newRow("schedule") << "--schedule"
                                  << "constant|step|multistep|cosine|poly|exp";
        QTest::newRow("augment") << "--augment"
                                 << "none|flip|crop-flip|assessment";
    }
    void bad_enum_values_name_the_flag_and_the_choices() {
        QFETCH(QString, flag);
        QFETCH(QString, choices);
        const auto parsed = parse_train_options({flag.toStdString(), "bogus"});
        QCOMPARE(parsed.problems.size(), std::size_t(1));
        const QString message = joined(parsed.problems);
        QVERIFY2(message.contains(flag) && message.contains(choices) && message.contains("bogus"),
                 qPrintable(message));
        QVERIFY2(QString::fromStdString(train_help()).contains(choices), qPrintable(choices));
    }

    void out_of_range_large_batch_values_name_the_flag_and_the_range_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("range");
        QTest::newRow("reference-batch 0") << "--reference-batch"
                                           << "0"
                                           << "of at least 1";
        QTest::newRow("beta1 1") << "--beta1"
                                 << "1"
                                 << "[0, 1)";
        QTest::newRow("beta2 -0.1") << "--beta2"
                                    << "-0.1"
                                    << "[0, 1)";
        QTest::newRow("eps 0") << "--eps"
                               << "0"
                               << "(0, 1)";
        QTest::newRow("trust-coefficient 0") << "--trust-coefficient"
                                             << "0"
                                             << "(0, 1]";
        QTest::newRow("trust-clamp -1") << "--trust-clamp"
                                        << "-1"
                                        << "at least 0";
        QTest::newRow("poly-power 0") << "--poly-power"
                                      << "0"
                                      << "(0, 10]";
        QTest::newRow("ghost-batch -1") << "--ghost-batch"
                                        << "-1"
                                        << "of at least 0";
        QTest::newRow("noise-scale-beta 1") << "--noise-scale-beta"
                                            << "1"
                                            << "[0, 1)";
        QTest::newRow("targets 1.5") << "--targets"
                                     << "0.85,1.5"
                                     << "(0, 1]";
        QTest::newRow("targets 0") << "--targets"
                                   << "0"
                                   << "(0, 1]";
        QTest::newRow("targets text") << "--targets"
                                      << "high"
                                      << "(0, 1]";
    }
    void out_of_range_large_batch_values_name_the_flag_and_the_range() {
        QFETCH(QString, flag);
        QFETCH(QString, value);
        QFETCH(QString, range);
        const auto parsed = parse_train_options({flag.toStdString(), value.toStdString()});
        QCOMPARE(parsed.problems.size(), std::size_t(1));
        const QString message = joined(parsed.problems);
        QVERIFY2(message.contains(flag) && message.contains(range), qPrintable(message));
    }

    void warmup_epochs_sets_the_unit() {
        const auto parsed = parse_train_options({"--warmup-epochs", "2.5"});
        QCOMPARE(parsed.options.spec.warmup_length, 2.5);
        QCOMPARE(parsed.options.spec.warmup_unit, scalelab::WarmupUnit::Epochs);
        QVERIFY(
            !parse_train_options({"--warmup-epochs", "1", "--warmup-steps", "5"}).problems.empty());
    }

    // "-1" is --lr's value (out of its range), not an unknown flag.
    void negative_numbers_are_values_not_flags() {
        QCOMPARE(only_problem(parse_train_options({"--lr", "-1"})),
                 QString("--lr expects a number above 0, got '-1'"));
    }

    void bad_values_name_the_flag() {
        const auto parsed = parse_train_options({"--epochs", "three", "--batch", "1.5", "--lr",
                                                 "nan", "--schedule", "linear", "--milestones",
                                                 "30;60", "--seed", "-3", "--log-level", "loud"});
        const QString message = joined(parsed.problems);
        QCOMPARE(parsed.problems.size(), std::size_t(7));
        for (const char* flag :
             {"--epochs", "--batch", "--lr", "--schedule", "--milestones", "--seed", "--log-level"})
            QVERIFY2(message.contains(flag), qPrintable(message));
    }

    // A flag given twice took its last value silently; a flag where a value belongs was taken
    // as the value ("--model --epochs 1" trained a model named "--epochs").
    void flags_given_twice_and_flags_for_values_are_refused() {
        QCOMPARE(
            parse_train_options({"--lr", "0.1", "--epochs", "2", "--lr=0.2"}).problems,
            std::vector<std::string>{"--lr was given twice ('0.1', then '0.2'): give it once"});
        QCOMPARE(parse_train_options({"--nesterov", "--nesterov"}).problems,
                 std::vector<std::string>{"--nesterov was given twice: give it once"});
        const auto repeated_tags = parse_train_options({"--tag", "a", "--tag", "b"});
        QVERIFY(repeated_tags.problems.empty());
        QCOMPARE(repeated_tags.options.tags, (std::vector<std::string>{"a", "b"}));
        // An empty value (an unset shell variable) is not the default.
        QCOMPARE(parse_train_options({"--data", ""}).problems,
                 std::vector<std::string>{"--data needs a value, not an empty one: leave the flag "
                                          "out for the default"});
        const auto flag_as_value = parse_train_options({"--model", "--epochs", "1"});
        QCOMPARE(flag_as_value.problems.front(), std::string("--model needs a value (NAME)"));
        QCOMPARE(flag_as_value.options.spec.epochs, 1);
    }

    void unknown_flags_missing_values_and_stray_words_are_problems() {
        QCOMPARE(parse_train_options({"--bogus"}).problems.front(),
                 std::string("unknown flag '--bogus'"));
        QVERIFY(QString::fromStdString(parse_train_options({"--epochs"}).problems.front())
                    .contains("needs a value"));
        QVERIFY(QString::fromStdString(parse_train_options({"--nesterov=yes"}).problems.front())
                    .contains("takes no value"));
        QVERIFY(QString::fromStdString(parse_train_options({"cnn"}).problems.front())
                    .contains("unexpected argument"));
    }

    void global_batch_is_split_over_devices_and_micro_batches() {
        auto parsed = parse_train_options({"--global-batch", "256", "--devices", "2"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.spec.batch, 128);
        QCOMPARE(parsed.options.global_batch, 256);
        // The order of the flags does not matter; accumulation divides too.
        parsed =
            parse_train_options({"--devices", "4", "--global-batch", "256", "--accumulation", "2"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.spec.batch, 32);
        // Without --global-batch, --batch is per device as before.
        parsed = parse_train_options({"--devices", "4", "--batch", "64"});
        QCOMPARE(parsed.options.spec.batch, 64);
        QCOMPARE(parsed.options.global_batch, 0);
    }

    void global_batch_takes_devices_from_the_config() {
        QTemporaryDir dir;
        const QString path = dir.filePath("run.json");
        write_file(path, R"({"devices": 4, "batch": 16})");
        const auto parsed =
            parse_train_options({"--global-batch", "512", "--config", path.toStdString()});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.spec.devices, 4);
        QCOMPARE(parsed.options.spec.batch, 128);
    }

    void indivisible_global_batch_suggests_the_nearest_valid_ones() {
        auto parsed = parse_train_options({"--global-batch", "100", "--devices", "3"});
        QCOMPARE(parsed.problems.size(), std::size_t(1));
        QString message = joined(parsed.problems);
        QVERIFY2(message.contains("--global-batch 100 is not divisible by 3 devices"),
                 qPrintable(message));
        QVERIFY2(message.contains("99") && message.contains("102"), qPrintable(message));

        parsed =
            parse_train_options({"--global-batch", "100", "--devices", "4", "--accumulation", "8"});
        message = joined(parsed.problems);
        QVERIFY2(message.contains("4 devices x 8 micro-batches = 32"), qPrintable(message));
        QVERIFY2(message.contains("96") && message.contains("128"), qPrintable(message));

        // Below one image per device: only the next valid value is suggested.
        parsed = parse_train_options({"--global-batch", "2", "--devices", "3"});
        message = joined(parsed.problems);
        QVERIFY2(message.contains("use --global-batch 3 (batch 1 per device)"),
                 qPrintable(message));
    }

    void batch_and_global_batch_together_are_a_problem() {
        const auto parsed = parse_train_options({"--batch", "64", "--global-batch", "128"});
        QCOMPARE(parsed.problems.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(parsed.problems.front()).contains("not both"),
                 qPrintable(joined(parsed.problems)));
        QVERIFY(!parse_train_options({"--global-batch", "0"}).problems.empty());
        QVERIFY(!parse_train_options({"--global-batch", "x"}).problems.empty());
    }

    // A whole number out of its range said "expects a whole number" (too large for an int) or
    // left the range to RunSpec::validate(), naming the field and not the flag.
    void out_of_range_whole_numbers_name_the_flag_and_the_range_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("problem");
        QTest::newRow("epochs 0") << QStringList{"--epochs", "0"}
                                  << "--epochs expects a whole number of at least 1, got '0'";
        QTest::newRow("epochs too large")
            << QStringList{"--epochs", "99999999999"}
            << "--epochs expects a whole number of at least 1, got '99999999999'";
        QTest::newRow("batch -3") << QStringList{"--batch", "-3"}
                                  << "--batch expects a whole number from 1 to 65536, got '-3'";
        QTest::newRow("devices 1000")
            << QStringList{"--devices", "1000"}
            << "--devices expects a whole number from 1 to 16, got '1000'";
        QTest::newRow("train-subset -1")
            << QStringList{"--train-subset", "-1"}
            << "--train-subset expects a whole number of at least 0, got '-1'";
    }
    void out_of_range_whole_numbers_name_the_flag_and_the_range() {
        QFETCH(QStringList, args);
        QFETCH(QString, problem);
        const auto parsed = parse_train_options({args[0].toStdString(), args[1].toStdString()});
        QCOMPARE(only_problem(parsed), problem);
        QVERIFY(parsed.options.spec.validate().empty());  // said once, by the flag
    }

    // A config file gets the same ranges from RunSpec::validate().
    void a_spec_out_of_range_is_refused_by_validate() {
        scalelab::RunSpec spec;
        spec.train_subset = -1;
        spec.devices = 17;
        QCOMPARE(spec.validate().size(), std::size_t(2));
    }

    // A 100,000-word command line of mistakes gave 100,000 lines; a long value was echoed whole.
    void flag_problems_are_capped_and_values_cut() {
        const std::vector<std::string> words(100'000, "--bogus");
        const auto parsed = parse_train_options(words);
        QCOMPARE(parsed.problems.size(), std::size_t(21));
        QCOMPARE(parsed.problems.back(), std::string("... and 99980 more problems"));
        QCOMPARE(only_problem(parse_train_options({"--epochs", std::string(100'000, '9')})),
                 "--epochs expects a whole number of at least 1, got '" + QString(60, '9') +
                     "...' (100000 bytes)");
        QCOMPARE(only_problem(parse_train_options({"--lr", "\x1b[2J"})),
                 QString("--lr expects a number above 0, got '\\x1b[2J'"));
    }

    void help_is_recognised() {
        QVERIFY(parse_train_options({"--help"}).options.help);
        QVERIFY(parse_train_options({"-h"}).options.help);
        QVERIFY(train_help().find("--warmup-epochs") != std::string::npos);
        for (const char* flag :
             {"--optimizer", "--lr-scaling", "--reference-batch", "--warmup ", "--poly-power",
              "--beta1", "--beta2", "--eps", "--trust-coefficient", "--larc", "--trust-clamp",
              "--grad-averaging", "--adapt-norm-bias", "--zero-init-residual", "--ghost-batch",
              "--augment", "--noise-scale-beta", "--targets"})
            QVERIFY2(train_help().find(flag) != std::string::npos, flag);
        for (const char* flag : {"--devices", "--global-batch", "--accumulation", "--bucket-mb",
                                 "--first-bucket-mb", "--no-overlap", "--sync-bn"})
            QVERIFY2(train_help().find(flag) != std::string::npos, flag);
        QVERIFY(bench_help().find("--devices") != std::string::npos);
        QVERIFY(parse_bench_train_options({"--help"}).options.help);
    }

    void flags_override_the_config_wherever_it_appears() {
        QTemporaryDir dir;
        const QString path = dir.filePath("run.json");
        write_file(path, R"({"epochs": 9, "lr": 0.2, "model": "mlp"})");
        const auto parsed = parse_train_options({"--epochs", "4", "--config", path.toStdString()});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.spec.epochs, 4);
        QCOMPARE(parsed.options.spec.lr, 0.2);
        QCOMPARE(parsed.options.spec.model, std::string("mlp"));
    }

    void config_problems_name_the_file_and_line() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.json");
        write_file(path, "{\n  \"epochs\": 2,\n  \"lr\": ,\n}\n");
        const auto parsed = parse_train_options({"--config", path.toStdString()});
        const QString message = joined(parsed.problems);
        QVERIFY2(message.contains(path) && message.contains("line 3"), qPrintable(message));
        QVERIFY(!parse_train_options({"--config", "/nonexistent/run.json"}).problems.empty());
    }

    void bench_lists_become_combinations() {
        const auto parsed = parse_bench_train_options(
            {"--model", "cnn,resnet8", "--batch", "32,128,512", "--threads", "1,2", "--width", "4",
             "--devices", "1,2", "--windows", "3", "--images", "1024", "--json", "--log-level",
             "warn"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        const BenchTrainOptions& o = parsed.options;
        QCOMPARE(o.models, (std::vector<std::string>{"cnn", "resnet8"}));
        QCOMPARE(o.batches, (std::vector<int>{32, 128, 512}));
        QCOMPARE(o.threads, (std::vector<int>{1, 2}));
        QCOMPARE(o.devices, (std::vector<int>{1, 2}));
        QCOMPARE(o.device, scalelab::DeviceKind::Cpu);
        QCOMPARE(parse_bench_train_options({"--device", "gpu"}).options.device,
                 scalelab::DeviceKind::Gpu);
        QCOMPARE(o.log_level, std::string("warn"));
        QCOMPARE(o.base.width, 4);
        QCOMPARE(o.base.windows, 3);
        QCOMPARE(o.base.images_per_window, 1024);
        QVERIFY(o.json);
    }

    void bench_rejects_non_positive_values() {
        QCOMPARE(parse_bench_train_options({"--batch", "32,0"}).problems.size(), std::size_t(1));
        QCOMPARE(parse_bench_train_options({"--threads", "x"}).problems.size(), std::size_t(1));
        QCOMPARE(parse_bench_train_options({"--windows", "-2"}).problems.size(), std::size_t(1));
        QCOMPARE(parse_bench_train_options({"--devices", "0"}).problems.size(), std::size_t(1));
        QCOMPARE(parse_bench_train_options({"--device", "tpu"}).problems,
                 (std::vector<std::string>{"--device expects cpu or gpu, got 'tpu'"}));
        const auto too_many = parse_bench_train_options({"--devices", "2,17"});
        QCOMPARE(too_many.problems.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(too_many.problems.front()).contains("1 to 16"),
                 qPrintable(joined(too_many.problems)));
        QCOMPARE(parse_bench_train_options({"--log-level", "loud"}).problems.size(),
                 std::size_t(1));
    }

    void bench_sgemm_shares_the_output_flags() {
        const auto parsed = parse_bench_sgemm_options(
            {"--threads", "1,2", "--size", "256", "--json", "--log-level", "debug"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.threads, (std::vector<int>{1, 2}));
        QCOMPARE(parsed.options.size, 256);
        QVERIFY(parsed.options.json);
        QCOMPARE(parsed.options.log_level, std::string("debug"));
        QVERIFY(!parsed.options.help);
        QVERIFY(parse_bench_sgemm_options({"-h"}).options.help);
        QCOMPARE(parse_bench_sgemm_options({"--log-level", "loud"}).problems.size(),
                 std::size_t(1));
        QVERIFY(bench_sgemm_help().find("--log-level") != std::string::npos);
    }

    void flag_values_read_whole_numbers_only() {
        QCOMPARE(parse_int("42"), std::optional<int>(42));
        QVERIFY(!parse_int("42x"));
        QVERIFY(!parse_int(""));
        QVERIFY(!parse_int("99999999999"));
        QCOMPARE(parse_double("1e-3"), std::optional<double>(1e-3));
        QCOMPARE(parse_double_list("0.85,0.9"),
                 std::optional<std::vector<double>>(std::vector<double>{0.85, 0.9}));
        QVERIFY(!parse_double_list("0.85,x"));
        QVERIFY(!parse_double("inf"));
        QCOMPARE(parse_int_list(""), std::optional<std::vector<int>>(std::vector<int>{}));
        QCOMPARE(number_text(0.05), std::string("0.05"));
    }

    void store_flags_name_and_tag_the_run() {
        const auto parsed = parse_train_options(
            {"--store", "lab.sqlite", "--name", "baseline", "--tag", "a", "--tag", "b c"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.store, std::string("lab.sqlite"));
        QCOMPARE(parsed.options.name, std::string("baseline"));
        QCOMPARE(parsed.options.tags, (std::vector<std::string>{"a", "b c"}));
        QVERIFY(!parsed.options.no_store);
        QVERIFY(parse_train_options({"--no-store"}).options.no_store);
        const auto both = parse_train_options({"--no-store", "--tag", "a"});
        QVERIFY2(joined(both.problems).contains("--no-store"), qPrintable(joined(both.problems)));
        QVERIFY(!parse_train_options({"--name", ""}).problems.empty());
    }

    void runs_operands_and_flags_come_in_any_order() {
        const auto parsed = parse_runs_options(
            RunsAction::Export, {"3", "-o", "out.scalelab.json", "4", "--store", "7", "3"});
        QVERIFY2(parsed.problems.empty(), qPrintable(joined(parsed.problems)));
        QCOMPARE(parsed.options.ids, (std::vector<std::int64_t>{3, 4}));  // repeats dropped
        QCOMPARE(parsed.options.file, std::string("out.scalelab.json"));
        QCOMPARE(parsed.options.store, std::string("7"));  // a flag's value, not a run id
        QVERIFY(!parsed.options.csv);

        const auto imported =
            parse_runs_options(RunsAction::Import, {"--store=s.sqlite", "in.json"});
        QVERIFY2(imported.problems.empty(), qPrintable(joined(imported.problems)));
        QCOMPARE(imported.options.file, std::string("in.json"));
        QCOMPARE(imported.options.store, std::string("s.sqlite"));
        QVERIFY(parse_runs_options(RunsAction::Delete, {"2", "--yes"}).options.yes);
        QVERIFY(parse_runs_options(RunsAction::List, {"--json"}).options.json);
        QVERIFY(parse_runs_options(RunsAction::Show, {"-h"}).options.help);
    }

    void runs_operands_are_checked_data() {
        QTest::addColumn<int>("action");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("problem");
        QTest::newRow("id 0") << int(RunsAction::Show) << QStringList{"0"} << "'0' is not a run id";
        QTest::newRow("negative id")
            << int(RunsAction::Delete) << QStringList{"-3", "--yes"} << "'-3'";
        QTest::newRow("no id") << int(RunsAction::Delete) << QStringList{"--yes"}
                               << "needs a run id";
        QTest::newRow("two files")
            << int(RunsAction::Import) << QStringList{"a", "b"} << "one file";
        QTest::newRow("flag of another subcommand")
            << int(RunsAction::List) << QStringList{"--csv"} << "unknown flag '--csv'";
        QTest::newRow("-o without a file")
            << int(RunsAction::Export) << QStringList{"1", "-o"} << "--output needs a value";
    }
    void runs_operands_are_checked() {
        QFETCH(int, action);
        QFETCH(QStringList, args);
        QFETCH(QString, problem);
        std::vector<std::string> words;
        for (const QString& arg : args)
            words.push_back(arg.toStdString());
        const auto parsed = parse_runs_options(RunsAction(action), words);
        QVERIFY2(joined(parsed.problems).contains(problem), qPrintable(joined(parsed.problems)));
    }

    // The words of the flag problems, as docs/errors.md gives them (E-FLAG-*, E-BENCH-FLAGS).
    void flag_problems_are_worded_exactly_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("problem");
        QTest::newRow("whole number")
            << QStringList{"--epochs", "three"}
            << "--epochs expects a whole number of at least 1, got 'three'";
        QTest::newRow("number in a range")
            << QStringList{"--beta1", "1"} << "--beta1 expects a number in [0, 1), got '1'";
        QTest::newRow("global batch") << QStringList{"--global-batch", "x"}
                                      << "--global-batch expects a positive whole number, got 'x'";
        QTest::newRow("seed") << QStringList{"--seed", "-3"}
                              << "--seed expects a whole number of at least 0, got '-3'";
        QTest::newRow("choice")
            << QStringList{"--schedule", "linear"}
            << "--schedule expects one of constant|step|multistep|cosine|poly|exp, got 'linear'";
        QTest::newRow("log level")
            << QStringList{"--log-level", "loud"}
            << QString::fromStdString("--log-level expects " + log_level_names() + ", got 'loud'");
        QTest::newRow("milestones")
            << QStringList{"--milestones", "30;60"}
            << "--milestones expects whole numbers of at least 1 like 30,60, "
               "got '30;60'";
        QTest::newRow("gpus") << QStringList{"--gpus", "0,one"}
                              << "--gpus expects whole numbers of at least 0 like 0,2, got '0,one'";
        QTest::newRow("device") << QStringList{"--device", "tpu"}
                                << "--device expects one of cpu|gpu, got 'tpu'";
        QTest::newRow("targets") << QStringList{"--targets", "high"}
                                 << "--targets expects numbers in (0, 1] like 0.85,0.9, got 'high'";
        QTest::newRow("store") << QStringList{"--store", ""} << "--store needs a file name";
        QTest::newRow("name") << QStringList{"--name", ""} << "--name needs a name";
        QTest::newRow("tag") << QStringList{"--tag", ""} << "--tag needs a tag";
        QTest::newRow("long name")
            << QStringList{"--name", QString(201, QLatin1Char('n'))}
            << "--name: a run name has at most 200 characters, this one has 201: shorten it";
        QTest::newRow("long tag")
            << QStringList{"--tag", QString(65, QLatin1Char('t'))}
            << "--tag: a tag has at most 64 characters, tag 1 has 65: shorten it";
        QTest::newRow("metrics-out")
            << QStringList{"--metrics-out", ""} << "--metrics-out needs a file name";
        QTest::newRow("two warm-ups") << QStringList{"--warmup-epochs", "1", "--warmup-steps", "5"}
                                      << "give --warmup-epochs or --warmup-steps, not both";
    }
    void flag_problems_are_worded_exactly() {
        QFETCH(QStringList, args);
        QFETCH(QString, problem);
        std::vector<std::string> words;
        for (const QString& arg : args)
            words.push_back(arg.toStdString());
        QCOMPARE(only_problem(parse_train_options(words)), problem);
    }

    void bench_and_runs_problems_are_worded_exactly() {
        QCOMPARE(only_problem(parse_bench_train_options({"--model", ","})),
                 QString("--model needs at least one model name"));
        QCOMPARE(only_problem(parse_bench_train_options({"--batch", "32,0"})),
                 QString("--batch expects positive whole numbers like 32,128, got '32,0'"));
        QCOMPARE(only_problem(parse_bench_train_options({"--windows", "-2"})),
                 QString("--windows expects a positive whole number, got '-2'"));
        QCOMPARE(only_problem(parse_bench_train_options({"--devices", "2,17"})),
                 QString("--devices expects device counts from 1 to 16 CPU devices, got '2,17'"));
        QCOMPARE(only_problem(parse_bench_sgemm_options({"--size", "0"})),
                 QString("--size expects a whole number from %1 to %2, got '0'")
                     .arg(scalelab::cpu::sgemm_min_size)
                     .arg(scalelab::cpu::sgemm_max_size));
        QCOMPARE(only_problem(parse_bench_allreduce_options({"--sizes", "1M,abc"})),
                 QString("--sizes expects sizes in bytes of at least 4 like 1M,64M (suffix K, M or "
                         "G), got '1M,abc'"));
        QCOMPARE(only_problem(parse_runs_options(RunsAction::Export, {"1", "-o", ""})),
                 QString("--output needs a file name"));
    }

    void bench_allreduce_backend_and_gpus() {
        const ParsedBenchAllReduceOptions cpu = parse_bench_allreduce_options({});
        QVERIFY2(cpu.problems.empty(), qPrintable(joined(cpu.problems)));
        QCOMPARE(cpu.options.backend, AllReduceBackend::Cpu);
        QVERIFY(cpu.options.gpus.empty());
        QVERIFY(!cpu.options.devices_given);

        const ParsedBenchAllReduceOptions listed =
            parse_bench_allreduce_options({"--gpus", "0,2", "--backend", "cuda"});
        QVERIFY2(listed.problems.empty(), qPrintable(joined(listed.problems)));
        QCOMPARE(listed.options.backend, AllReduceBackend::Cuda);
        QCOMPARE(listed.options.gpus, std::string("0,2"));

        const ParsedBenchAllReduceOptions first =
            parse_bench_allreduce_options({"--backend", "cuda", "--devices", "3"});
        QVERIFY2(first.problems.empty(), qPrintable(joined(first.problems)));
        QVERIFY(first.options.devices_given);
        QCOMPARE(first.options.devices, 3);

        QCOMPARE(only_problem(parse_bench_allreduce_options({"--backend", "gpu"})),
                 QString("--backend expects cpu or cuda, got 'gpu'"));
        QCOMPARE(only_problem(parse_bench_allreduce_options({"--gpus", "0,1"})),
                 QString("--gpus lists CUDA GPUs: add --backend cuda, or give --devices N for CPU "
                         "devices"));
        QCOMPARE(only_problem(parse_bench_allreduce_options(
                     {"--backend", "cuda", "--gpus", "0", "--devices", "2"})),
                 QString("give --gpus or --devices, not both: --gpus lists the GPUs, --devices N "
                         "takes the first N"));
        QCOMPARE(only_problem(parse_bench_allreduce_options({"--backend", "cuda", "--gpus="})),
                 QString("--gpus needs GPU indices such as 0,1"));
    }

    void lesson_options_are_checked_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("problem");
        QTest::newRow("no action")
            << QStringList{} << "lesson takes list or run (got ''): scalelab-cli lesson list";
        QTest::newRow("unknown action")
            << QStringList{"fly"}
            << "lesson takes list or run (got 'fly'): scalelab-cli lesson list";
        QTest::newRow("run without a lesson")
            << QStringList{"run"}
            << "lesson run needs a lesson: a number from 'scalelab-cli lesson list', or a file";
        QTest::newRow("a flag of run given to list")
            << QStringList{"list", "--size", "test"}
            << "--size is for 'lesson run': lesson list takes --log-level";
        QTest::newRow("store and no store")
            << QStringList{"run", "3", "--store", "a.sqlite", "--no-store"}
            << "give --store FILE or --no-store, not both";
        QTest::newRow("size") << QStringList{"run", "3", "--size", "huge"}
                              << "--size expects full or test, got 'huge'";
    }
    void lesson_options_are_checked() {
        QFETCH(QStringList, args);
        QFETCH(QString, problem);
        std::vector<std::string> words;
        for (const QString& arg : args)
            words.push_back(arg.toStdString());
        QCOMPARE(only_problem(parse_lesson_options(words)), problem);

        const ParsedLessonOptions good = parse_lesson_options({"run", "3", "--size", "test"});
        QVERIFY2(good.problems.empty(), qPrintable(joined(good.problems)));
        QCOMPARE(good.options.lesson, std::string("3"));
        QCOMPARE(good.options.size, scalelab::LessonSize::Test);
    }
};

QTEST_APPLESS_MAIN(TestCliOptions)
#include "test_cli_options.moc"
