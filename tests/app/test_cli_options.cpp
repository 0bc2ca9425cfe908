#include <QTemporaryDir>
#include <QtTest>

#include "cli/bench_options.h"
#include "cli/bench_sgemm_options.h"
#include "cli/flag_values.h"
#include "cli/train_options.h"

using namespace scalelab::cli;

namespace {

QString joined(const std::vector<std::string>& problems) {
    QStringList lines;
    for (const auto& p : problems)
        lines.append(QString::fromStdString(p));
    return lines.join('\n');
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
        QVERIFY(s.augment);
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
        QCOMPARE(s.min_lr, 0.001);
        QCOMPARE(s.warmup, 200.0);
        QCOMPARE(s.warmup_unit, scalelab::WarmupUnit::Steps);
        QCOMPARE(s.warmup_start_factor, 0.2);
        QCOMPARE(s.seed, 18446744073709551615ull);
        QCOMPARE(s.threads, 2);
        QCOMPARE(s.target_accuracy, 0.9);
        QCOMPARE(s.patience, 2);
        QCOMPARE(o.metrics_out, std::string("m.jsonl"));
        QCOMPARE(o.log_level, std::string("debug"));
    }

    void warmup_epochs_sets_the_unit() {
        const auto parsed = parse_train_options({"--warmup-epochs", "2.5"});
        QCOMPARE(parsed.options.spec.warmup, 2.5);
        QCOMPARE(parsed.options.spec.warmup_unit, scalelab::WarmupUnit::Epochs);
        QVERIFY(
            !parse_train_options({"--warmup-epochs", "1", "--warmup-steps", "5"}).problems.empty());
    }

    void negative_numbers_are_values_not_flags() {
        const auto parsed = parse_train_options({"--epochs", "-1"});
        QVERIFY(parsed.problems.empty());
        QCOMPARE(parsed.options.spec.epochs, -1);  // validate() rejects it, with its message
    }

    void bad_values_name_the_flag() {
        const auto parsed = parse_train_options({"--epochs", "three", "--batch", "1.5", "--lr",
                                                 "nan", "--schedule", "exp", "--milestones",
                                                 "30;60", "--seed", "-3", "--log-level", "loud"});
        const QString message = joined(parsed.problems);
        QCOMPARE(parsed.problems.size(), std::size_t(7));
        for (const char* flag :
             {"--epochs", "--batch", "--lr", "--schedule", "--milestones", "--seed", "--log-level"})
            QVERIFY2(message.contains(flag), qPrintable(message));
    }

    void unknown_flags_missing_values_and_stray_words_are_problems() {
        QCOMPARE(parse_train_options({"--bogus"}).problems.front(),
                 std::string("unknown flag --bogus"));
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

    void out_of_range_devices_are_left_to_validate() {
        // The flag only reads the number; RunSpec::validate() says what the range is.
        for (const char* devices : {"0", "17"}) {
            const auto parsed = parse_train_options({"--devices", devices});
            QVERIFY(parsed.problems.empty());
            QVERIFY2(!parsed.options.spec.validate().empty(), devices);
        }
    }

    void help_is_recognised() {
        QVERIFY(parse_train_options({"--help"}).options.help);
        QVERIFY(parse_train_options({"-h"}).options.help);
        QVERIFY(train_help().find("--warmup-epochs") != std::string::npos);
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
        QVERIFY(!parse_double("inf"));
        QCOMPARE(parse_int_list(""), std::optional<std::vector<int>>(std::vector<int>{}));
        QCOMPARE(number_text(0.05), std::string("0.05"));
    }
};

QTEST_APPLESS_MAIN(TestCliOptions)
#include "test_cli_options.moc"
