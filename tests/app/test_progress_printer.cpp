#include <QtTest>

#include <cstdio>
#include <limits>
#include <string>

#include "cli/progress_printer.h"

using scalelab::cli::ProgressPrinter;

namespace {

// Everything written to `file` so far.
QString contents(std::FILE* file) {
    std::fflush(file);
    std::rewind(file);
    std::string text;
    char buffer[512];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
        text.append(buffer, n);
    return QString::fromStdString(text);
}

scalelab::StepMetrics step_on(int devices, int step_in_epoch, double forward_s) {
    scalelab::StepMetrics m;
    m.step = step_in_epoch;
    m.epoch = 1;
    m.step_in_epoch = step_in_epoch;
    m.steps_per_epoch = 2;
    m.images_per_s = 1000;
    m.seconds = 0.1;
    for (int rank = 0; rank < devices; ++rank)
        m.devices.push_back({0.001, forward_s, 0.004, 0.0005, 0.0002, 0.0003, {}});
    return m;
}

scalelab::RunSpec spec_of(int epochs) {
    scalelab::RunSpec spec;
    spec.epochs = epochs;
    return spec;
}

scalelab::EpochMetrics epoch_one() {
    scalelab::EpochMetrics m;
    m.epoch = 1;
    m.step = 2;
    m.epoch_seconds = 0.2;
    m.images_per_s = 1234;
    return m;
}

}  // namespace

class TestProgressPrinter : public QObject {
    Q_OBJECT

  private slots:
    void run_info_is_printed_once() {
        std::FILE* file = std::tmpfile();
        QVERIFY(file);
        {
            ProgressPrinter printer(file, spec_of(1), false);
            scalelab::RunInfo info;
            info.devices = 2;
            info.threads_per_device = 1;
            info.cores = 2;
            info.global_batch = 256;
            info.steps_per_epoch = 32;
            info.parameters = 1234567;
            printer.on_start(info);
        }
        const QString text = contents(file);
        std::fclose(file);
        QCOMPARE(text.count('\n'), 1);
        for (const char* part : {"2 devices", "1 thread", "2 cores", "global batch 256",
                                 "32 steps per epoch", "1,234,567 parameters", "sgd, lr 0.05"})
            QVERIFY2(text.contains(part), qPrintable(text));
        QVERIFY2(!text.contains(" x none"), qPrintable(text));
    }

    void first_line_shows_the_optimizer_and_the_scaled_lr() {
        std::FILE* file = std::tmpfile();
        QVERIFY(file);
        {
            scalelab::RunSpec spec;
            spec.optimizer = scalelab::OptimizerKind::Lars;
            spec.devices = 4;
            spec.batch = 128;
            spec.lr_scaling = scalelab::LrScaling::Linear;
            ProgressPrinter printer(file, spec, false);
            printer.on_start({});
        }
        const QString text = contents(file);
        std::fclose(file);
        QVERIFY2(text.contains("lars, lr 0.05 x linear(512/256) = 0.1\n"), qPrintable(text));
    }

    void a_disturbed_run_says_so_at_the_end() {
        for (const double share : {0.45, 0.05, std::numeric_limits<double>::quiet_NaN()}) {
            std::FILE* file = std::tmpfile();
            QVERIFY(file);
            {
                ProgressPrinter printer(file, spec_of(1), false);
                scalelab::EpochMetrics m = epoch_one();
                m.other_programs_share = share;
                printer.on_epoch(m);
                printer.on_end(scalelab::RunEnd{});
            }
            const QString text = contents(file);
            std::fclose(file);
            QCOMPARE(text.contains(QStringLiteral("disturbed: other programs used 45% of the cores "
                                                  "during this run, so its images/s may be low")),
                     share == 0.45);
            QCOMPARE(text.contains(QStringLiteral("disturbed")), share == 0.45);
        }
    }

    void epoch_and_final_lines_show_the_targets_reached() {
        std::FILE* file = std::tmpfile();
        QVERIFY(file);
        {
            ProgressPrinter printer(file, spec_of(1), false);  // targets 0.85 and 0.9
            scalelab::EpochMetrics m = epoch_one();
            const scalelab::TargetReached reached{0.85, 12.34, 400, 1, 51200};
            m.reached = {reached};
            printer.on_epoch(m);
            scalelab::RunEnd end;
            end.epoch = 1;
            end.step = 2;
            end.targets = {reached};
            printer.on_end(end);
        }
        const QStringList lines = contents(file).split('\n', Qt::SkipEmptyParts);
        std::fclose(file);
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].contains("reached 0.85 at 12.3 s, step 400"), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains("finished at epoch 1, step 2; reached 0.85 at 12.3 s, step 400"),
                 qPrintable(lines[1]));
        QVERIFY2(lines[1].contains("0.9 not reached"), qPrintable(lines[1]));
    }

    void epoch_line_has_the_mean_breakdown_for_several_devices() {
        std::FILE* file = std::tmpfile();
        QVERIFY(file);
        {
            ProgressPrinter printer(file, spec_of(1), false);
            // Two devices, two steps: forward 2 ms then 4 ms on each, so 3 ms per step.
            printer.on_step(step_on(2, 1, 0.002));
            printer.on_step(step_on(2, 2, 0.004));
            printer.on_epoch(epoch_one());
        }
        const QString text = contents(file);
        std::fclose(file);
        QVERIFY2(text.contains("1234 img/s"), qPrintable(text));
        for (const char* part :
             {"forward 3.00", "backward 4.00", "comm 0.50", "wait 0.20", "data 1.00", "opt 0.30"})
            QVERIFY2(text.contains(part), qPrintable(text));
    }

    void each_epoch_starts_a_new_breakdown() {
        std::FILE* file = std::tmpfile();
        QVERIFY(file);
        {
            ProgressPrinter printer(file, spec_of(2), false);
            printer.on_step(step_on(2, 1, 0.010));
            printer.on_epoch(epoch_one());
            printer.on_step(step_on(2, 1, 0.002));
            scalelab::EpochMetrics second = epoch_one();
            second.epoch = 2;
            printer.on_epoch(second);
        }
        const QStringList lines = contents(file).split('\n', Qt::SkipEmptyParts);
        std::fclose(file);
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].contains("forward 10.00"), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains("forward 2.00"), qPrintable(lines[1]));
    }

    void one_device_has_no_breakdown() {
        std::FILE* file = std::tmpfile();
        QVERIFY(file);
        {
            ProgressPrinter printer(file, spec_of(1), false);
            printer.on_step(step_on(1, 1, 0.002));
            printer.on_epoch(epoch_one());
        }
        const QString text = contents(file);
        std::fclose(file);
        QVERIFY2(text.contains("img/s") && !text.contains("forward"), qPrintable(text));
    }
};

QTEST_APPLESS_MAIN(TestProgressPrinter)
#include "test_progress_printer.moc"
