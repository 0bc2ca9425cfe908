// Choosing a run's GPUs by count or by a list of indices: valid requests give the indices asked
// for, and every bad one (too many, an index that does not exist, a repeat, a word that is not a
// number, no GPU at all) says what to change.

#include <QtTest>

#include <vector>

#include "backend/gpu_selection.h"

using namespace scalelab;

namespace {

DeviceInventory machine_with_gpus(int count) {
    DeviceInventory inventory;
    for (int i = 0; i < count; ++i) {
        GpuDescription gpu;
        gpu.index = i;
        gpu.name = "test GPU";
        gpu.memory_bytes = std::uint64_t(16) << 30;
        inventory.gpus.push_back(gpu);
    }
    if (count == 0)
        inventory.no_gpu_reason = "no NVIDIA driver is installed; runs use CPU devices";
    return inventory;
}

QString joined(const std::vector<std::string>& problems) {
    QStringList lines;
    for (const std::string& problem : problems)
        lines.append(QString::fromStdString(problem));
    return lines.join('\n');
}

}  // namespace

class TestGpuSelection : public QObject {
    Q_OBJECT

  private slots:
    void a_count_takes_the_first_gpus() {
        const GpuSelection selection = select_first_gpus(3, machine_with_gpus(4));
        QVERIFY2(selection.problems.empty(), qPrintable(joined(selection.problems)));
        QCOMPARE(selection.indices, (std::vector<int>{0, 1, 2}));
    }

    void a_bad_count_says_what_to_ask_for_data() {
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("message");
        QTest::newRow("zero") << 0 << 2 << "the number of GPUs must be at least 1 (got 0)";
        QTest::newRow("too many") << 3 << 2
                                  << "3 GPUs asked for, but this machine has 2: ask for at most 2";
        QTest::newRow("none here")
            << 1 << 0
            << "1 GPU asked for, but no GPU can be used here: no NVIDIA driver is installed; runs "
               "use CPU devices";
    }
    void a_bad_count_says_what_to_ask_for() {
        QFETCH(int, count);
        QFETCH(int, gpus);
        QFETCH(QString, message);
        const GpuSelection selection = select_first_gpus(count, machine_with_gpus(gpus));
        QVERIFY(selection.indices.empty());
        QCOMPARE(joined(selection.problems), message);
    }

    void a_list_takes_the_gpus_named() {
        const GpuSelection selection = select_listed_gpus("2,0", machine_with_gpus(4));
        QVERIFY2(selection.problems.empty(), qPrintable(joined(selection.problems)));
        QCOMPARE(selection.indices, (std::vector<int>{2, 0}));
        QCOMPARE(select_listed_gpus("0", machine_with_gpus(1)).indices, std::vector<int>{0});
    }

    void a_bad_list_says_what_to_change_data() {
        QTest::addColumn<QString>("list");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << "" << 2 << "the GPU list is empty: list indices such as 0,2";
        QTest::newRow("not a number")
            << "0,x" << 2
            << "'x' in the GPU list '0,x' is not a GPU index: list indices such as 0,2";
        QTest::newRow("negative")
            << "-1" << 2
            << "'-1' in the GPU list '-1' is not a GPU index: list indices such as 0,2";
        QTest::newRow("trailing comma")
            << "0," << 2 << "'' in the GPU list '0,' is not a GPU index: list indices such as 0,2";
        QTest::newRow("out of range")
            << "0,3" << 3 << "GPU 3 does not exist: this machine has GPUs 0, 1 and 2";
        QTest::newRow("out of range, one GPU")
            << "1" << 1 << "GPU 1 does not exist: this machine has GPU 0 only";
        QTest::newRow("repeated") << "1,0,1,1" << 2
                                  << "GPU 1 is listed twice: each GPU runs one device";
        QTest::newRow("none here")
            << "0,1" << 0
            << "2 GPUs asked for, but no GPU can be used here: no NVIDIA driver is installed; runs "
               "use CPU devices";
    }
    void a_bad_list_says_what_to_change() {
        QFETCH(QString, list);
        QFETCH(int, gpus);
        QFETCH(QString, message);
        const GpuSelection selection =
            select_listed_gpus(list.toStdString(), machine_with_gpus(gpus));
        QVERIFY(selection.indices.empty());
        QCOMPARE(joined(selection.problems), message);
    }
};

QTEST_APPLESS_MAIN(TestGpuSelection)
#include "test_gpu_selection.moc"
