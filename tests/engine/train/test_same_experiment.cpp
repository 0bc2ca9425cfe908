// experiment_mismatch: processes started with the same experiment agree; a process started with
// another batch, or several other settings, is named with its host and the field. The processes
// are threads here (ThreadProcesses); the check runs the same over MPI.

#include <QtTest>

#include <string>
#include <thread>
#include <vector>

#include "comm/thread_comm.h"
#include "thread_processes.h"
#include "train/same_experiment.h"

using namespace scalelab;

namespace {

// What experiment_mismatch returned in each of specs.size() processes, process p started with
// specs[p].
std::vector<std::string> mismatches(const std::vector<RunSpec>& specs) {
    const auto group = comm::ThreadGroup::create(int(specs.size()));
    std::vector<std::string> results(specs.size());
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < specs.size(); ++p)
        threads.emplace_back([&, p] {
            testing::ThreadProcesses processes(group->communicator(int(p)));
            results[p] = experiment_mismatch(processes, specs[p]);
        });
    for (std::thread& thread : threads)
        thread.join();
    return results;
}

}  // namespace

class TestSameExperiment : public QObject {
    Q_OBJECT

  private slots:
    void theSameExperimentAgrees() {
        for (const std::string& result : mismatches({RunSpec{}, RunSpec{}, RunSpec{}}))
            QVERIFY2(result.empty(), result.c_str());
    }

    void aDifferentBatchIsNamedInEveryProcess() {
        RunSpec other;
        other.batch = RunSpec{}.batch / 2;
        const std::string expected =
            "process 2 (host host2) was started with batch " + std::to_string(other.batch) +
            ", process 0 (host host0) with batch " + std::to_string(RunSpec{}.batch);
        for (const std::string& result : mismatches({RunSpec{}, RunSpec{}, other}))
            QCOMPARE(result, expected);
    }

    void manyDifferencesAreCapped() {
        RunSpec other;
        other.batch += 1;
        other.epochs += 1;
        other.lr *= 2;
        other.seed += 1;
        other.momentum = 0.5;
        other.weight_decay = 0.01;
        other.model = "resnet8";
        const std::string result = mismatches({RunSpec{}, other}).front();
        QCOMPARE(result.front(), 'p');
        QCOMPARE(std::count(result.begin(), result.end(), '\n'), 5L);
        QVERIFY2(result.ends_with("... and 2 more settings differ"), result.c_str());
        QVERIFY2(result.find("was started with model resnet8") != std::string::npos,
                 result.c_str());
    }
};

QTEST_MAIN(TestSameExperiment)
#include "test_same_experiment.moc"
