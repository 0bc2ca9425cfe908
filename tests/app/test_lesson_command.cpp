// `scalelab-cli lesson run` with repeats: each lesson run's seeds trained one after another and
// summed up as a group, the claims compared on the groups' means, a difference within the seed
// noise reported as not shown (exit 1), and --seed refused where the repeats would pass the
// largest seed.

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_process.h"

using scalelab::testing::run_cli;

namespace {

// Two lesson runs of the same experiment over the same two seeds: their runs are alike bit for
// bit, so "a" cannot be shown to be better than "b", whatever the machine.
constexpr const char* twin_lesson = R"({
  "title": "Twins",
  "explanation": "The same runs twice.",
  "charts": ["val_accuracy"],
  "base": {"model": "mlp", "dataset": "synthetic", "synthetic_train": 256, "synthetic_test": 64,
           "batch": 32, "epochs": 2, "threads": 1, "seed": 5, "repeats": 2},
  "runs": [{"name": "a"}, {"name": "b"}],
  "expect": [{"claim": "a is no worse than b", "metric": "best_val_accuracy", "run": "a",
              "within": 0.001, "of": "b"},
             {"claim": "a beats b", "metric": "best_val_accuracy", "run": "a",
              "better_than": "b"}]
})";

// twin_lesson as a file in `dir`.
QString twin_lesson_file(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("twins.json"));
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(twin_lesson) < 0)
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

}  // namespace

class TestLessonCommand : public QObject {
    Q_OBJECT

  private slots:
    void repeatsTrainAsGroupsAndNoiseIsNotAClaimHeld() {
        QTemporaryDir dir;
        const QString file = twin_lesson_file(dir);
        const auto result = run_cli({"lesson", "run", file, "--no-store"});
        QVERIFY2(!result.crashed, qPrintable(result.err));
        for (const char* expected :
             {"Twins: 4 runs", "run 1/4: a (seed 5)", "run 2/4: a (seed 6)", "run 4/4: b (seed 6)",
              "a: 2 runs: 2 finished; best val accuracy", "b: 2 runs: 2 finished",
              "  held      a is no worse than b", "  NOT SHOWN a beats b",
              "not shown by these runs: within seed noise: best_val_accuracy",
              "1 of 2 claims did not hold"})
            QVERIFY2(result.out.contains(QLatin1String(expected)),
                     qPrintable(QStringLiteral("no \"%1\" in:\n%2").arg(expected, result.out)));
        QCOMPARE(result.exit_code, 1);
    }

    void aSeedThatTheRepeatsWouldPassIsRefused() {
        QTemporaryDir dir;
        const QString file = twin_lesson_file(dir);
        const auto result =
            run_cli({"lesson", "run", file, "--no-store", "--seed", "18446744073709551615"});
        QCOMPARE(result.exit_code, 2);
        QVERIFY2(result.err.contains(QStringLiteral(
                     "\"repeats\" of “a” 2 from seed 18446744073709551615 would pass the "
                     "largest seed")),
                 qPrintable(result.err));
        QVERIFY(result.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLessonCommand)
#include "test_lesson_command.moc"
