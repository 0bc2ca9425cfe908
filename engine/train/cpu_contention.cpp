#include "train/cpu_contention.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

namespace scalelab {

namespace {

// The fields of a cpuN line, in ticks: user nice system idle iowait irq softirq steal guest
// guest_nice. Busy is all but idle and iowait (iowait is idle time with I/O outstanding).
// guest and guest_nice are not added: the kernel already counts guest time in user and
// guest_nice in nice, so adding them would count a virtual machine's time twice.
constexpr int kProcStatIdle = 3;
constexpr int kProcStatIowait = 4;
constexpr int kProcStatSteal = 7;
constexpr int kProcStatBusyFields = kProcStatSteal + 1;  // fields a line must have

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

// The busy ticks of one cpuN line's fields (the text after "cpuN"); nullopt where a field is not
// an unsigned count or there are fewer than kProcStatBusyFields.
std::optional<std::uint64_t> busy_ticks_of_fields(std::string_view fields) {
    std::uint64_t busy = 0;
    int index = 0;
    std::size_t i = 0;
    while (true) {
        while (i < fields.size() && is_blank(fields[i]))
            ++i;
        if (i == fields.size())
            break;
        std::uint64_t value = 0;
        const char* first = fields.data() + i;
        const char* last = fields.data() + fields.size();
        const auto [end, ec] = std::from_chars(first, last, value);
        if (ec != std::errc() || (end != last && !is_blank(*end)))
            return std::nullopt;
        i = std::size_t(end - fields.data());
        if (index <= kProcStatSteal && index != kProcStatIdle && index != kProcStatIowait)
            busy += value;
        ++index;
    }
    if (index < kProcStatBusyFields)
        return std::nullopt;
    return busy;
}

// The cores this process may run on: the affinity of its main thread (the process id), which is
// what taskset or a cpuset gave the process, rather than the calling thread's, which a thread
// pool may have pinned to one core. The mask grows until the kernel's fits (EINVAL: too small).
std::optional<std::vector<int>> affinity_cores() {
    for (int max_cpus = 1024; max_cpus <= (1 << 16); max_cpus *= 2) {
        cpu_set_t* set = CPU_ALLOC(max_cpus);
        if (set == nullptr)
            return std::nullopt;
        const std::size_t bytes = CPU_ALLOC_SIZE(max_cpus);
        CPU_ZERO_S(bytes, set);
        if (sched_getaffinity(getpid(), bytes, set) != 0) {
            const int error = errno;
            CPU_FREE(set);
            if (error == EINVAL)
                continue;
            return std::nullopt;
        }
        std::vector<int> cores;
        for (int cpu = 0; cpu < max_cpus; ++cpu)
            if (CPU_ISSET_S(cpu, bytes, set))
                cores.push_back(cpu);
        CPU_FREE(set);
        return cores;
    }
    return std::nullopt;
}

double timeval_seconds(const timeval& t) {
    return double(t.tv_sec) + double(t.tv_usec) * 1e-6;
}

}  // namespace

std::optional<CoreBusy> parse_proc_stat(std::string_view text, const std::vector<int>& cores,
                                        double ticks_per_second) {
    if (!(ticks_per_second > 0))
        return std::nullopt;
    std::vector<int> wanted = cores;
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    std::vector<bool> seen(wanted.size(), false);

    std::uint64_t busy_ticks = 0;
    int found = 0;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        const std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);

        // Only "cpu<N> ..." lines: the aggregate "cpu  ..." line (all cores, whatever the
        // affinity) has no number, and intr, ctxt, btime and the rest do not start with "cpu".
        if (!line.starts_with("cpu"))
            continue;
        const char* number = line.data() + 3;
        const char* line_end = line.data() + line.size();
        int cpu = 0;
        const auto [after, ec] = std::from_chars(number, line_end, cpu);
        if (ec != std::errc() || cpu < 0 || after == line_end || !is_blank(*after))
            continue;
        const auto it = std::lower_bound(wanted.begin(), wanted.end(), cpu);
        if (it == wanted.end() || *it != cpu)
            continue;
        const std::size_t slot = std::size_t(it - wanted.begin());
        if (seen[slot])
            return std::nullopt;  // not /proc/stat: it lists each core once
        seen[slot] = true;
        const std::optional<std::uint64_t> ticks =
            busy_ticks_of_fields(line.substr(std::size_t(after - line.data())));
        if (!ticks)
            return std::nullopt;
        busy_ticks += *ticks;
        ++found;
    }
    if (found == 0)
        return std::nullopt;
    return CoreBusy{double(busy_ticks) / ticks_per_second, found};
}

std::optional<CpuTimes> read_cpu_times() {
    const std::optional<std::vector<int>> cores = affinity_cores();
    if (!cores || cores->empty())
        return std::nullopt;
    const long ticks_per_second = sysconf(_SC_CLK_TCK);
    if (ticks_per_second <= 0)
        return std::nullopt;

    std::ifstream file("/proc/stat");
    if (!file)
        return std::nullopt;
    // /proc files report a size of 0: read until the end rather than by the size.
    const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (file.bad())
        return std::nullopt;
    const std::optional<CoreBusy> busy = parse_proc_stat(text, *cores, double(ticks_per_second));
    if (!busy)
        return std::nullopt;

    // RUSAGE_SELF: all of this process's threads, those that ended included, and not its
    // children, whose time is other programs' time here. It is the scheduler's own account,
    // finer than /proc/stat's ticks.
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return std::nullopt;

    CpuTimes times;
    times.cores_busy_s = busy->busy_s;
    times.own_s = timeval_seconds(usage.ru_utime) + timeval_seconds(usage.ru_stime);
    times.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    times.cores = busy->cores;
    times.core_ids = *cores;
    return times;
}

std::optional<double> other_programs_share(const CpuTimes& start, const CpuTimes& end) {
    // /proc/stat counts whole ticks (1/100 s), charged to whoever runs when the tick fires: over
    // a shorter interval a few ticks' error would be a large share.
    constexpr double kMinInterval_s = 0.2;
    const double wall = end.wall_s - start.wall_s;
    if (!(wall >= kMinInterval_s))
        return std::nullopt;
    if (start.cores <= 0 || start.cores != end.cores || start.core_ids != end.core_ids)
        return std::nullopt;
    // The cores could give wall * cores seconds; they were busy for the busy delta, of which
    // this process's threads spent the own delta. The rest is other programs':
    //   share = (busy delta - own delta) / (wall delta * cores).
    // It can come out a little below 0 (an idle machine: own time is exact, the cores' busy
    // time is counted in ticks) or above 1 (the same ticks on a saturated machine): clamp.
    const double other_s = (end.cores_busy_s - start.cores_busy_s) - (end.own_s - start.own_s);
    const double share = other_s / (wall * double(start.cores));
    return std::clamp(share, 0.0, 1.0);
}

}  // namespace scalelab
