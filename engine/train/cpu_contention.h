#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace scalelab {

// How much of the CPU other programs took while a run trained, so that a run whose throughput
// they may have disturbed can say so ("other programs used 45% of the cores during this run"):
// take a reading at the start and one at the end, and compare them with other_programs_share.
// Linux only: the cores' time comes from /proc/stat.

// A reading of the CPU time spent on the cores this process may use (its affinity mask), and of
// this process's own CPU time (all its threads).
struct CpuTimes {
    // Sum over the affinity's cores of their non-idle time (user, nice, system, irq, softirq,
    // steal) from /proc/stat's cpuN lines, whoever spent it: this process, other processes
    // (this process's children included), the kernel, and other virtual machines (steal).
    double cores_busy_s = 0;
    double own_s = 0;   // this process's user + system time, all its threads (getrusage)
    double wall_s = 0;  // steady clock
    int cores = 0;  // how many of the affinity's cores /proc/stat listed (an offline one is not)
    // The affinity's cores, as sched_getaffinity gave them for the process (its main thread):
    // two readings are comparable only over the same cores.
    std::vector<int> core_ids;
};

// Reads now; nullopt where /proc/stat cannot be read or parsed (not Linux, a sandbox) or the
// affinity cannot be read.
std::optional<CpuTimes> read_cpu_times();

// The share of the cores' capacity other processes used between two readings, in [0, 1]:
//   (cores_busy_s delta - own_s delta) / (wall_s delta * cores),
// clamped to [0, 1]. nullopt when the interval is under 0.2 s (a few ticks of /proc/stat would
// be most of it) or the readings cover different cores (count or core_ids differ).
std::optional<double> other_programs_share(const CpuTimes& start, const CpuTimes& end);

// The busy seconds of some cores, as parse_proc_stat reads them.
struct CoreBusy {
    double busy_s = 0;
    int cores = 0;  // how many of the cores asked for had a cpuN line
};

// Parses /proc/stat text: the summed busy seconds (user + nice + system + irq + softirq + steal,
// over ticks_per_second, which is sysconf(_SC_CLK_TCK)) of the cpuN lines whose N is in `cores`,
// and how many were found. The aggregate "cpu " line and the cpuN lines of other cores are
// ignored. nullopt when a wanted cpuN line has fewer than those 8 fields or a field that is not
// a count of ticks, when a wanted core is listed twice, when none of `cores` is listed, or when
// ticks_per_second is not positive. Exposed for tests.
std::optional<CoreBusy> parse_proc_stat(std::string_view text, const std::vector<int>& cores,
                                        double ticks_per_second);

}  // namespace scalelab
