// How much of the cores other programs took during an interval: /proc/stat's cpuN lines parsed
// for the affinity's cores only, the share computed from two readings, and real measurements
// with a spinning child process (other programs' time) and a spinning thread of this process
// (its own time, which is not other programs').

#include <QTest>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "spinning_child.h"
#include "train/cpu_contention.h"

using scalelab::CoreBusy;
using scalelab::CpuTimes;
using scalelab::other_programs_share;
using scalelab::parse_proc_stat;
using scalelab::read_cpu_times;
using scalelab::testing::SpinningChild;

namespace {

// Ticks in /proc/stat's order: user nice system idle iowait irq softirq steal guest guest_nice.
// Busy = user + nice + system + irq + softirq + steal; idle, iowait, guest and guest_nice are
// large so that counting any of them shows.
constexpr const char* kProcStat =
    "cpu  10000 200 3000 50000 400 50 60 70 8000 9000\n"
    "cpu0 100 2 30 5000 40 5 6 7 1000 2000\n"          // busy 150
    "cpu1 200 4 60 5000 80 10 12 14 1000 2000\n"       // busy 300
    "cpu2 300 6 90 5000 120 15 18 21 1000 2000\n"      // busy 450
    "cpu10 1000 20 300 5000 400 50 60 70 1000 2000\n"  // busy 1500
    "intr 123456 0 0 0 0\n"
    "ctxt 987654\n"
    "btime 1700000000\n"
    "processes 4242\n"
    "procs_running 3\n"
    "procs_blocked 0\n"
    "softirq 5555 1 2 3 4 5 6 7 8 9 10\n";

CpuTimes reading(double busy_s, double own_s, double wall_s, int cores) {
    CpuTimes t;
    t.cores_busy_s = busy_s;
    t.own_s = own_s;
    t.wall_s = wall_s;
    t.cores = cores;
    return t;
}

double thread_cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

}  // namespace

class TestCpuContention : public QObject {
    Q_OBJECT

  private slots:
    void parses_only_the_listed_cores() {
        const std::optional<CoreBusy> b = parse_proc_stat(kProcStat, {0, 2, 10}, 100);
        QVERIFY(b.has_value());
        QCOMPARE(b->cores, 3);
        QCOMPARE(b->busy_s, (150 + 450 + 1500) / 100.0);

        // cpu1 alone: not cpu10, whose name starts the same.
        const std::optional<CoreBusy> one = parse_proc_stat(kProcStat, {1}, 100);
        QVERIFY(one.has_value());
        QCOMPARE(one->cores, 1);
        QCOMPARE(one->busy_s, 3.0);

        // The order of the cores and repeats in the list do not matter.
        const std::optional<CoreBusy> again = parse_proc_stat(kProcStat, {10, 0, 2, 0}, 100);
        QVERIFY(again.has_value());
        QCOMPARE(again->cores, 3);
        QCOMPARE(again->busy_s, b->busy_s);
    }

    void sums_user_nice_system_irq_softirq_and_steal() {
        // One field set at a time: the busy ones count, idle, iowait, guest and guest_nice not.
        const char* names[] = {"user", "nice",    "system", "idle",  "iowait",
                               "irq",  "softirq", "steal",  "guest", "guest_nice"};
        const bool busy[] = {true, true, true, false, false, true, true, true, false, false};
        for (int field = 0; field < 10; ++field) {
            std::string line = "cpu0";
            for (int i = 0; i < 10; ++i)
                line += i == field ? " 250" : " 0";
            const std::optional<CoreBusy> b = parse_proc_stat(line + "\n", {0}, 100);
            QVERIFY2(b.has_value(), names[field]);
            QVERIFY2(b->busy_s == (busy[field] ? 2.5 : 0.0), names[field]);
        }
        // Kernels before 2.6.24 have no guest fields: the 8 busy ones are enough.
        const std::optional<CoreBusy> old = parse_proc_stat("cpu3 1 2 3 4 5 6 7 8\n", {3}, 1);
        QVERIFY(old.has_value());
        QCOMPARE(old->busy_s, 1.0 + 2 + 3 + 6 + 7 + 8);
        // USER_HZ other than 100.
        const std::optional<CoreBusy> hz250 = parse_proc_stat(kProcStat, {0}, 250);
        QVERIFY(hz250.has_value());
        QCOMPARE(hz250->busy_s, 150 / 250.0);
    }

    void ignores_the_aggregate_line() {
        // Read as a core, "cpu " would add the machine's total (13380 busy ticks).
        const std::optional<CoreBusy> b = parse_proc_stat(kProcStat, {0}, 100);
        QVERIFY(b.has_value());
        QCOMPARE(b->cores, 1);
        QCOMPARE(b->busy_s, 1.5);
        QVERIFY(!parse_proc_stat("cpu  10000 200 3000 50000 400 50 60 70 8000 9000\n", {0}, 100));
    }

    void counts_the_listed_cores_it_found() {
        // cpu7 is not listed (an offline core): the reading covers the one found.
        const std::optional<CoreBusy> b = parse_proc_stat(kProcStat, {0, 7}, 100);
        QVERIFY(b.has_value());
        QCOMPARE(b->cores, 1);
        QCOMPARE(b->busy_s, 1.5);
        QVERIFY(!parse_proc_stat(kProcStat, {7}, 100));
        QVERIFY(!parse_proc_stat(kProcStat, {}, 100));
    }

    void rejects_garbage_and_missing_fields() {
        QVERIFY(!parse_proc_stat("", {0}, 100));
        QVERIFY(!parse_proc_stat("hello\nworld\n", {0}, 100));
        QVERIFY(!parse_proc_stat("cpu0\n", {0}, 100));
        QVERIFY(!parse_proc_stat("cpu0 1 2 3\n", {0}, 100));
        QVERIFY(!parse_proc_stat("cpu0 1 2 3 4 5 6 7\n", {0}, 100));  // no steal
        QVERIFY(!parse_proc_stat("cpu0 1 2 x 4 5 6 7 8\n", {0}, 100));
        QVERIFY(!parse_proc_stat("cpu0 1 2 3 4 5 6 7 -8\n", {0}, 100));
        QVERIFY(!parse_proc_stat("cpu0 1 2 3 4 5 6 7 8x\n", {0}, 100));
        QVERIFY(!parse_proc_stat("cpu0 1 2 3 4 5 6 7 99999999999999999999999\n", {0}, 100));
        // A listed core twice is not /proc/stat.
        QVERIFY(!parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", {0}, 100));
        // A bad line of a core not asked for does not matter; a bad one of a core asked for does.
        const std::string text = std::string(kProcStat) + "cpu5 garbage\n";
        QVERIFY(parse_proc_stat(text, {0}, 100).has_value());
        QVERIFY(!parse_proc_stat(text, {0, 5}, 100));
        // No clock tick rate.
        QVERIFY(!parse_proc_stat(kProcStat, {0}, 0));
        QVERIFY(!parse_proc_stat(kProcStat, {0}, -100));
    }

    void share_is_others_busy_time_over_the_capacity() {
        // 4 cores for 2 s: 8 s of capacity. Busy 4 s, 1 s of it this process's: 3 / 8.
        const std::optional<double> s =
            other_programs_share(reading(10, 2, 100, 4), reading(14, 3, 102, 4));
        QVERIFY(s.has_value());
        QCOMPARE(*s, 0.375);
        // The same with no own time: 4 / 8.
        const std::optional<double> all =
            other_programs_share(reading(10, 2, 100, 4), reading(14, 2, 102, 4));
        QVERIFY(all.has_value());
        QCOMPARE(*all, 0.5);
    }

    void share_is_clamped_to_0_and_1() {
        // Own time a little past the cores' ticked busy time: 0, not negative.
        const std::optional<double> low =
            other_programs_share(reading(10, 2, 100, 2), reading(11, 3.25, 101, 2));
        QVERIFY(low.has_value());
        QCOMPARE(*low, 0.0);
        // More busy ticks than the cores had seconds: 1.
        const std::optional<double> high =
            other_programs_share(reading(10, 2, 100, 2), reading(12.5, 2, 101, 2));
        QVERIFY(high.has_value());
        QCOMPARE(*high, 1.0);
    }

    void share_needs_0_2_s_and_the_same_cores() {
        QVERIFY(!other_programs_share(reading(0, 0, 0, 2), reading(0.1, 0, 0.19, 2)));
        QVERIFY(!other_programs_share(reading(0, 0, 1, 2), reading(0.1, 0, 0, 2)));  // backwards
        const std::optional<double> at =
            other_programs_share(reading(0, 0, 0, 2), reading(0.1, 0, 0.2, 2));
        QVERIFY(at.has_value());
        QCOMPARE(*at, 0.25);

        QVERIFY(!other_programs_share(reading(0, 0, 0, 4), reading(1, 0, 1, 3)));
        QVERIFY(!other_programs_share(reading(0, 0, 0, 0), reading(1, 0, 1, 0)));
        CpuTimes a = reading(0, 0, 0, 2);
        CpuTimes b = reading(1, 0, 1, 2);
        a.core_ids = {0, 1};
        b.core_ids = {0, 1};
        QVERIFY(other_programs_share(a, b).has_value());
        b.core_ids = {2, 3};  // as many cores, but others
        QVERIFY(!other_programs_share(a, b));
    }

    void reads_the_affinity_cores() {
        const std::optional<CpuTimes> a = read_cpu_times();
        if (!a)
            QSKIP("read_cpu_times() has no reading here (no /proc/stat, or it cannot be parsed)");
        QVERIFY(a->cores >= 1);
        QVERIFY(a->cores <= int(a->core_ids.size()));
        QVERIFY(a->cores_busy_s > 0);
        QVERIFY(a->own_s > 0);
        const std::optional<CpuTimes> b = read_cpu_times();
        QVERIFY(b.has_value());
        QCOMPARE(b->core_ids, a->core_ids);
        QVERIFY(b->cores_busy_s >= a->cores_busy_s);
        QVERIFY(b->own_s >= a->own_s);
        QVERIFY(b->wall_s >= a->wall_s);
    }

    // One child spinning on one of C cores is 1/C of their capacity, at least while it gets a
    // core. On a machine busy with other tests it may get less, but then those tests' time is
    // other programs' too: the share stays at 1/C or more whatever the load. Half of it leaves
    // room for the scheduler.
    void a_spinning_child_is_another_program() {
        const std::optional<CpuTimes> start = read_cpu_times();
        if (!start)
            QSKIP("read_cpu_times() has no reading here (no /proc/stat, or it cannot be parsed)");
        SpinningChild child;
        QVERIFY2(child.started(), "fork failed");
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        const std::optional<CpuTimes> end = read_cpu_times();
        QVERIFY(end.has_value());
        const double child_s = child.stop();
        QVERIFY(child_s >= 0);

        const std::optional<double> share = other_programs_share(*start, *end);
        QVERIFY(share.has_value());
        const double wall = end->wall_s - start->wall_s;
        const int cores = start->cores;
        QVERIFY2(*share >= 0.5 / cores,
                 qPrintable(QString::asprintf("share %.3f over %.2f s on %d cores, the child "
                                              "spun %.2f s: expected at least %.3f",
                                              *share, wall, cores, child_s, 0.5 / cores)));
        // All the child's time is in the others' (it ran only on these cores, after the first
        // reading; it was killed just after the second), but for /proc/stat's ticks.
        const double others_s = *share * wall * cores;
        QVERIFY2(others_s >= 0.9 * child_s - 0.05,
                 qPrintable(QString::asprintf("others' time %.3f s, the child's %.3f s", others_s,
                                              child_s)));
    }

    // This process's own time, spent by a thread other than the one reading, is not other
    // programs': the share is what the cores were busy minus all of it. Whatever else the
    // machine runs (the CI runner is 2 cores, with other tests beside this one), other programs'
    // time can be at most the busy time less the spinning thread's.
    void own_threads_are_not_other_programs() {
        const std::optional<CpuTimes> start = read_cpu_times();
        if (!start)
            QSKIP("read_cpu_times() has no reading here (no /proc/stat, or it cannot be parsed)");
        // Spins until it has had 1 s of CPU (10 s at most, on a machine too busy to give it).
        double spun_s = 0;
        std::thread spinner([&spun_s] {
            const double from = thread_cpu_s();
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            volatile unsigned long counter = 0;
            while (thread_cpu_s() - from < 1.0 && std::chrono::steady_clock::now() < give_up)
                for (int i = 0; i < 10000; ++i)
                    counter = counter + 1;
            spun_s = thread_cpu_s() - from;
        });
        spinner.join();
        const std::optional<CpuTimes> end = read_cpu_times();
        QVERIFY(end.has_value());

        const double own = end->own_s - start->own_s;
        const double busy = end->cores_busy_s - start->cores_busy_s;
        const double wall = end->wall_s - start->wall_s;
        const int cores = start->cores;
        const QString figures = QString::asprintf(
            "thread spun %.3f s; own %.3f s, cores busy %.3f s, over %.3f s on %d cores", spun_s,
            own, busy, wall, cores);
        // The reading's own time has the spinning thread's (all threads, not the reading one's).
        QVERIFY2(own >= spun_s - 0.01, qPrintable(figures));
        // The thread ran on these cores: /proc/stat saw them busy for its time, give or take
        // ticks.
        QVERIFY2(busy >= 0.9 * spun_s - 0.05, qPrintable(figures));

        const std::optional<double> share = other_programs_share(*start, *end);
        QVERIFY(share.has_value());
        const double others_s = *share * wall * cores;
        QVERIFY2(others_s <= std::max(0.0, busy - spun_s) + 1e-9,
                 qPrintable(QString::asprintf("others' time %.3f s: ", others_s) + figures));
    }
};

QTEST_GUILESS_MAIN(TestCpuContention)
#include "test_cpu_contention.moc"
