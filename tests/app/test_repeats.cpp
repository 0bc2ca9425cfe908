#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "cli/train_options.h"
#include "cli_process.h"
#include "error.h"
#include "repeats.h"
#include "run_group.h"
#include "run_spec_json.h"
#include "run_store.h"
#include "run_summary.h"

using scalelab::Error;
using scalelab::Experiment;
using scalelab::experiment_from_json;
using scalelab::experiment_to_json;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::RunStore;
using scalelab::cli::parse_train_options;
using scalelab::testing::CliResult;
using scalelab::testing::run_cli;

namespace {

const QStringList small_synthetic_run{"train", "--dataset",        "synthetic", "--synthetic-train",
                                      "256",   "--synthetic-test", "128",       "--epochs",
                                      "1",     "--batch",          "64",        "--model",
                                      "mlp"};

QString problems_text(const std::vector<std::string>& problems) {
    QString text;
    for (const std::string& problem : problems)
        text += QString::fromStdString(problem) + '\n';
    return text;
}

// The problem experiment_from_json throws for `document`; empty when it reads.
QString file_problem(const QByteArray& document) {
    try {
        experiment_from_json(document);
    } catch (const Error& error) {
        return QString::fromUtf8(error.what());
    }
    return {};
}

// Adds a finished run to `store`, in `group`, with a best validation accuracy.
void add_run(RunStore& store, const QString& group, std::uint64_t seed, RunState state,
             double best) {
    RunSpec spec;
    spec.seed = seed;
    const std::int64_t id = store.create_run(spec, {}, {}, group);
    scalelab::EpochMetrics epoch;
    epoch.epoch = 1;
    epoch.val_accuracy = best;
    store.append_metrics(id, {{1, 1, 1.0, scalelab::Metric::ValAccuracy, best}}, {epoch});
    store.mark_ended(id, state, {});
}

}  // namespace

class TestRepeats : public QObject {
    Q_OBJECT

    QTemporaryDir data_home_;  // runs without --store go to a store of the test's own

  private slots:
    void initTestCase() { qputenv("XDG_DATA_HOME", data_home_.path().toUtf8()); }

    void repeatsAreSeedsInARow() {
        RunSpec spec;
        spec.seed = 7;
        std::vector<RunSpec> specs = scalelab::repeat_specs(spec, 3);
        QCOMPARE(specs.size(), std::size_t(3));
        for (std::size_t i = 0; i < specs.size(); ++i) {
            QCOMPARE(specs[i].seed, 7 + i);
            specs[i].seed = spec.seed;
            QVERIFY(scalelab::differing_settings(specs[i], spec).empty());
        }
        QVERIFY(scalelab::new_group_id() != scalelab::new_group_id());
    }

    void badRepeatsNameTheRange_data() {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        const QString range = QStringLiteral("from 1 to %1").arg(scalelab::most_repeats);
        QTest::newRow("0") << "0"
                           << "--repeats must be a whole number " + range + ", got 0";
        QTest::newRow("-2") << "-2"
                            << "--repeats must be a whole number " + range + ", got -2";
        QTest::newRow("65") << "65"
                            << "--repeats must be a whole number " + range + ", got 65";
        QTest::newRow("abc") << "abc"
                             << "--repeats expects a whole number " + range + ", got 'abc'";
        QTest::newRow("2.5") << "2.5"
                             << "--repeats expects a whole number " + range;
    }
    void badRepeatsNameTheRange() {
        QFETCH(QString, value);
        QFETCH(QString, message);
        const auto parsed = parse_train_options({"--repeats", value.toStdString()});
        QVERIFY2(problems_text(parsed.problems).contains(message),
                 qPrintable(problems_text(parsed.problems)));
    }

    void repeatsThatPassTheLargestSeedAreRefused() {
        const auto parsed =
            parse_train_options({"--repeats", "3", "--seed", "18446744073709551614"});
        QVERIFY2(
            problems_text(parsed.problems).contains("use a seed of at most 18446744073709551613"),
            qPrintable(problems_text(parsed.problems)));
        QVERIFY(parse_train_options({"--repeats", "2", "--seed", "18446744073709551614"})
                    .problems.empty());
    }

    void repeatsNeedTheStoreAndOneRunsOutputs_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("value");
        QTest::newRow("no store") << "--no-store"
                                  << "";
        QTest::newRow("metrics") << "--metrics-out"
                                 << "m.jsonl";
        QTest::newRow("initial state") << "--save-initial"
                                       << "i.npz";
    }
    void repeatsNeedTheStoreAndOneRunsOutputs() {
        QFETCH(QString, flag);
        QFETCH(QString, value);
        std::vector<std::string> args{"--repeats", "2", flag.toStdString()};
        if (!value.isEmpty())
            args.push_back(value.toStdString());
        const auto parsed = parse_train_options(args);
        QCOMPARE(parsed.problems.size(), std::size_t(1));
        QVERIFY2(problems_text(parsed.problems).contains("drop " + flag),
                 qPrintable(problems_text(parsed.problems)));
        args[1] = "1";
        QVERIFY(parse_train_options(args).problems.empty());
    }

    void experimentFilesCarryRepeats() {
        Experiment experiment;
        experiment.spec.seed = 3;
        experiment.repeats = 5;
        const QByteArray file = QJsonDocument(experiment_to_json(experiment)).toJson();
        const Experiment read = experiment_from_json(file);
        QCOMPARE(read.repeats, 5);
        QCOMPARE(read.spec.seed, std::uint64_t(3));
        // One run writes no "repeats", and a file without it means one run.
        QVERIFY(!experiment_to_json({}).contains("repeats"));
        QCOMPARE(experiment_from_json("{}").repeats, 1);
        // A stored run's spec is one run: it never takes "repeats".
        QVERIFY_THROWS_EXCEPTION(Error, scalelab::run_spec_from_json(file));
    }

    void badRepeatsInAFileNameTheKeyAndRange_data() {
        QTest::addColumn<QByteArray>("document");
        QTest::addColumn<QString>("message");
        const QString range = QStringLiteral("from 1 to %1").arg(scalelab::most_repeats);
        QTest::newRow("0") << QByteArray(R"({"repeats": 0})")
                           << "\"repeats\" must be a whole number " + range + ", got 0";
        QTest::newRow("100") << QByteArray(R"({"repeats": 100})")
                             << "\"repeats\" must be a whole number " + range + ", got 100";
        QTest::newRow("string") << QByteArray(R"({"repeats": "3"})")
                                << "\"repeats\" must be a whole number " + range +
                                       ", got the string \"3\"";
        QTest::newRow("past the largest seed")
            << QByteArray(R"({"repeats": 2, "seed": "18446744073709551615"})")
            << "would pass the largest seed";
    }
    void badRepeatsInAFileNameTheKeyAndRange() {
        QFETCH(QByteArray, document);
        QFETCH(QString, message);
        const QString problem = file_problem(document);
        QVERIFY2(problem.contains(message), qPrintable(problem));
    }

    void theConfigFilesRepeatsAreUsedAndFlagsOverrideThem() {
        QTemporaryDir dir;
        const QString config = dir.filePath("run.json");
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"model": "mlp", "repeats": 4})");
        file.close();
        QCOMPARE(parse_train_options({"--config", config.toStdString()}).options.repeats, 4);
        QCOMPARE(parse_train_options({"--config", config.toStdString(), "--repeats", "2"})
                     .options.repeats,
                 2);
    }

    void cliExitsTwoOnBadRepeats() {
        const CliResult r = run_cli({"train", "--repeats", "0"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--repeats must be a whole number from 1 to"), qPrintable(r.err));
    }

    void trainRepeatsRecordsOneGroupAndPrintsItsLine() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        const CliResult r = run_cli(
            small_synthetic_run + QStringList{"--repeats", "3", "--seed", "10", "--store", store});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QCOMPARE(r.out.count("recorded as run"), 3);
        QVERIFY2(r.out.contains("; best val acc "), qPrintable(r.out));
        QVERIFY2(r.out.contains("3 runs: 3 finished"), qPrintable(r.out));
        const std::vector<scalelab::StoredRun> runs = RunStore::open(store)->list_runs();
        QCOMPARE(runs.size(), std::size_t(3));
        for (std::size_t i = 0; i < runs.size(); ++i) {
            QCOMPARE(runs[i].spec.seed, 10 + i);
            QVERIFY(!runs[i].group.isEmpty());
            QCOMPARE(runs[i].group, runs.front().group);
        }
        QVERIFY2(
            r.out.contains("group mlp, 1 dev × 64, lr 0.05 · seeds 10–12 (runs 1-3): 3 runs: 3 "
                           "finished"),
            qPrintable(r.out));
    }

    void runsListShowsAGroupAsOneLineWithItsSpread() {
        QTemporaryDir dir;
        const QString path = dir.filePath("runs.sqlite");
        {
            const std::unique_ptr<RunStore> store = RunStore::open(path);
            add_run(*store, {}, 0, RunState::Finished, 0.5);
            add_run(*store, "g", 1, RunState::Finished, 0.80);
            add_run(*store, "g", 2, RunState::Finished, 0.84);
            add_run(*store, "g", 3, RunState::Diverged, 0.10);
            add_run(*store, {}, 0, RunState::Finished, 0.6);
        }
        CliResult r = run_cli({"runs", "list", "--store", path});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);  // the header, run 1, the group, run 5
        QVERIFY2(lines[1].trimmed().startsWith("1 "), qPrintable(lines[1]));
        // Mean and sample standard deviation of 0.80, 0.84 and 0.10.
        for (const char* cell :
             {"2-4", "run · seeds 1–3", "3 runs: 2 finished, 1 diverged", "0.5800 ± 0.4162"})
            QVERIFY2(lines[2].contains(cell), qPrintable(cell + QString(" not in ") + lines[2]));
        QVERIFY2(lines[3].trimmed().startsWith("5 "), qPrintable(lines[3]));

        r = run_cli({"runs", "list", "--expand", "--store", path});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 7);
        for (int i = 3; i <= 5; ++i)
            QVERIFY2(lines[i].startsWith(QStringLiteral("  %1 ").arg(i - 1)), qPrintable(lines[i]));
        QVERIFY2(lines[5].contains("diverged"), qPrintable(lines[5]));

        r = run_cli({"runs", "list", "--json", "--store", path});
        QVERIFY2(r.out.split('\n', Qt::SkipEmptyParts)[1].contains(R"("group":"g")"),
                 qPrintable(r.out));
        r = run_cli({"runs", "list", "--json", "--expand", "--store", path});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--expand is for the table"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestRepeats)
#include "test_repeats.moc"
