#include <QtTest>

#include <cmath>
#include <vector>

#include "group_curves.h"

using namespace scalelab;

namespace {

// A member's points, kept alive for the spans of MemberCurve.
struct Points {
    std::vector<double> xs;
    std::vector<double> ys;
    MemberCurve curve() const { return {xs, ys}; }
};

GroupCurve curve_of(const std::vector<Points>& members, GroupBand band) {
    std::vector<MemberCurve> curves;
    for (const Points& member : members)
        curves.push_back(member.curve());
    return group_curve(curves, band);
}

void compare(const std::vector<double>& actual, const std::vector<double>& expected) {
    QCOMPARE(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
        QVERIFY2(std::abs(actual[i] - expected[i]) < 1e-12,
                 qPrintable(QStringLiteral("at %1: %2 against %3")
                                .arg(i)
                                .arg(actual[i], 0, 'g', 17)
                                .arg(expected[i], 0, 'g', 17)));
}

}  // namespace

class TestGroupCurves : public QObject {
    Q_OBJECT

  private slots:
    // Three members at the same xs: mean 2, sample standard deviation 1 at each x
    // (values 1, 2, 3: squares 1 + 0 + 1 over n - 1 = 2).
    void meanAndStandardDeviationAtSharedXs() {
        const std::vector<Points> members = {
            {{0, 1}, {1, 10}}, {{0, 1}, {2, 20}}, {{0, 1}, {3, 30}}};
        const GroupCurve curve = curve_of(members, GroupBand::StdDev);
        compare(curve.xs, {0, 1});
        compare(curve.mean, {2, 20});
        compare(curve.low, {1, 10});
        compare(curve.high, {3, 30});
    }

    void minToMax() {
        const std::vector<Points> members = {
            {{0, 1}, {5, 10}}, {{0, 1}, {1, 40}}, {{0, 1}, {3, 30}}};
        const GroupCurve curve = curve_of(members, GroupBand::MinMax);
        compare(curve.mean, {3, 80.0 / 3});
        compare(curve.low, {1, 10});
        compare(curve.high, {5, 40});
    }

    void noBandIsTheMean() {
        const std::vector<Points> members = {{{0, 1}, {1, 2}}, {{0, 1}, {3, 6}}};
        const GroupCurve curve = curve_of(members, GroupBand::Off);
        compare(curve.mean, {2, 4});
        compare(curve.low, curve.mean);
        compare(curve.high, curve.mean);
    }

    // A at 0, 2, 4 (y = 2x); B at 0, 1, 3, 4 (10, 20, 40, 0). The xs are both members' together;
    // A at 1 and 3 is 2 and 6, B at 2 is halfway from 20 to 40: 30.
    void interpolatesWhereMembersDiffer() {
        const std::vector<Points> members = {{{0, 2, 4}, {0, 4, 8}},
                                             {{0, 1, 3, 4}, {10, 20, 40, 0}}};
        const GroupCurve curve = curve_of(members, GroupBand::MinMax);
        compare(curve.xs, {0, 1, 2, 3, 4});
        compare(curve.mean, {5, 11, 17, 23, 4});
        compare(curve.low, {0, 2, 4, 6, 0});
        compare(curve.high, {10, 20, 30, 40, 8});
    }

    // A runs over [0, 3], B over [1, 4]: the mean is drawn over [1, 3] only, where both have
    // data. Two values a, b have the standard deviation |a - b| / sqrt(2).
    void definedWhereEveryMemberHasData() {
        const std::vector<Points> members = {{{0, 1, 2, 3}, {0, 2, 4, 6}},
                                             {{1, 2, 3, 4}, {1, 1, 1, 1}}};
        const GroupCurve curve = curve_of(members, GroupBand::StdDev);
        compare(curve.xs, {1, 2, 3});
        compare(curve.mean, {1.5, 2.5, 3.5});
        const double root2 = std::sqrt(2.0);
        compare(curve.low, {1.5 - 1 / root2, 2.5 - 3 / root2, 3.5 - 5 / root2});
        compare(curve.high, {1.5 + 1 / root2, 2.5 + 3 / root2, 3.5 + 5 / root2});
    }

    void emptyWithoutOverlapOrPoints() {
        QVERIFY(curve_of({{{0, 1}, {1, 1}}, {{2, 3}, {1, 1}}}, GroupBand::StdDev).xs.empty());
        QVERIFY(curve_of({{{0, 1}, {1, 1}}, {{}, {}}}, GroupBand::StdDev).xs.empty());
        QVERIFY(curve_of({}, GroupBand::StdDev).xs.empty());
    }

    // One member is its own curve, with no band.
    void oneMemberHasNoBand() {
        const GroupCurve curve = curve_of({{{0, 1, 2}, {3, 1, 2}}}, GroupBand::StdDev);
        compare(curve.mean, {3, 1, 2});
        compare(curve.low, {3, 1, 2});
        compare(curve.high, {3, 1, 2});
    }

    // A diverged member's NaN leaves its xs without a finite mean, and the others untouched.
    void nonFiniteValuesStayWhereTheyAre() {
        const std::vector<Points> members = {{{0, 1, 2}, {1, NAN, 1}}, {{0, 1, 2}, {3, 3, 3}}};
        const GroupCurve curve = curve_of(members, GroupBand::MinMax);
        QCOMPARE(curve.mean[0], 2.0);
        QVERIFY(std::isnan(curve.mean[1]));
        QVERIFY(std::isnan(curve.low[1]));
        QCOMPARE(curve.high[2], 3.0);
    }

    void legendNamesWhatTheMembersShare() {
        QCOMPARE(group_legend({"resnet8 batch 256 seed 1", "resnet8 batch 256 seed 2",
                               "resnet8 batch 256 seed 3"}),
                 QStringLiteral("resnet8 batch 256 (3 seeds)"));
        QCOMPARE(group_legend({"cnn (seed 7)", "cnn (seed 8)"}), QStringLiteral("cnn (2 seeds)"));
        // "run 1" is no name of theirs: the common beginning is cut back to a whole word.
        QCOMPARE(group_legend({"run 1", "run 12"}), QStringLiteral("run (2 seeds)"));
        QCOMPARE(group_legend({"mlp #1", "mlp #2"}), QStringLiteral("mlp (2 seeds)"));
        QCOMPARE(group_legend({"alpha", "beta"}), QStringLiteral("alpha (2 seeds)"));
        QCOMPARE(group_legend({"seedling 1", "seedling 2"}), QStringLiteral("seedling (2 seeds)"));
    }
};

QTEST_GUILESS_MAIN(TestGroupCurves)
#include "test_group_curves.moc"
