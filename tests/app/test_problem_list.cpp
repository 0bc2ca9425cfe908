// ProblemList: the problems of one input, the first ones in full and the rest counted.

#include <QtTest>

#include "problem_list.h"

using scalelab::ProblemList;

class TestProblemList : public QObject {
    Q_OBJECT

  private slots:
    void fewProblemsAreAllListed() {
        ProblemList problems;
        QVERIFY(problems.empty());
        problems.add("one");
        problems.add("two");
        QVERIFY(!problems.empty());
        QCOMPARE(problems.lines(), (std::vector<std::string>{"one", "two"}));
    }

    void problemsPastTheKeptOnesAreCounted() {
        ProblemList problems(2);
        for (int i = 0; i < 3; ++i)
            problems.add("p" + std::to_string(i));
        QCOMPARE(problems.lines(),
                 (std::vector<std::string>{"p0", "p1", "... and 1 more problem"}));
        for (int i = 3; i < 1'000'000; ++i)
            problems.add("p" + std::to_string(i));
        QCOMPARE(problems.lines().back(), std::string("... and 999998 more problems"));
        QCOMPARE(problems.lines().size(), std::size_t(3));
        QCOMPARE(problems.lines("a.json: ").back(),
                 std::string("a.json: ... and 999998 more problems"));
    }
};

QTEST_APPLESS_MAIN(TestProblemList)
#include "test_problem_list.moc"
