// What a bench command started by mpirun says when its processes were given different flags
// (the join itself is tested under mpirun: tests/app/mpi/bench_across_processes.sh).

#include <QtTest>

#include <string>
#include <vector>

#include "cli/bench_processes.h"

using scalelab::cli::different_flags;

class TestBenchProcesses : public QObject {
    Q_OBJECT

  private slots:
    void theSameFlagsAreAccepted() {
        const std::vector<std::string> flags{"--model", "cnn", "--batch", "32"};
        QCOMPARE(different_flags({flags, flags, flags}, {"a", "b", "c"}), std::string());
        QCOMPARE(different_flags({flags}, {"a"}), std::string());
    }

    // The first process that differs is named with its host and both flag lines, an argument
    // with spaces kept whole.
    void theFirstDifferenceIsNamed() {
        const std::vector<std::string> mine{"--model", "cnn", "--name", "my run"};
        const std::vector<std::string> other{"--model", "mlp", "--name", "my run"};
        QCOMPARE(different_flags({mine, mine, other, other}, {"a", "b", "c", "d"}),
                 std::string("the processes were not started with the same flags: process 2 "
                             "(host c) with '--model mlp --name my run', process 0 (host a) with "
                             "'--model cnn --name my run'; start every process with the same "
                             "flags"));
        // A flag more is a difference too.
        std::vector<std::string> longer = mine;
        longer.push_back("--json");
        QVERIFY(!different_flags({mine, longer}, {"a", "b"}).empty());
    }
};

QTEST_MAIN(TestBenchProcesses)
#include "test_bench_processes.moc"
