// How busy the machine is while the calibration measures: other programs'
// share of the CPU time, from /proc/stat around the measurement.
#include "cairn/kernel_calibration.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>

namespace cairn {

namespace {

// More ticks than any machine counts (at 100 per second, 2^56 is 22 million
// years): eight of them cannot overflow the sum.
constexpr uint64_t kMaxTicks = uint64_t(1) << 56;

double processCpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

std::optional<MachineCpuTicks> readMachineTicks() {
    std::ifstream in("/proc/stat");
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    return parseProcStatCpu(line);
}

}  // namespace

std::optional<MachineCpuTicks> parseProcStatCpu(std::string_view procStat) {
    const std::string_view line = procStat.substr(0, procStat.find('\n'));
    if (!line.starts_with("cpu ")) return std::nullopt;
    // user nice system idle iowait irq softirq steal (guest time is inside user)
    std::array<uint64_t, 8> v{};  // kernels before 2.6.11 give fewer than 8: the rest stay 0
    const char* p = line.data() + 4;
    const char* end = line.data() + line.size();
    size_t count = 0;
    for (; count < v.size(); ++count) {
        while (p < end && *p == ' ') ++p;
        if (p == end) break;
        const auto [next, ec] = std::from_chars(p, end, v[count]);
        if (ec != std::errc() || (next < end && *next != ' ') || v[count] > kMaxTicks) return std::nullopt;
        p = next;
    }
    if (count < 4) return std::nullopt;
    MachineCpuTicks t;
    for (uint64_t x : v) t.total += x;
    t.busy = t.total - v[3] - v[4];
    return t;
}

double othersCpuShare(const MachineCpuTicks& before, const MachineCpuTicks& after, double ownTicks) {
    if (after.total <= before.total || after.busy < before.busy) return 0;
    const double busy = double(after.busy - before.busy) - ownTicks;
    return std::clamp(busy / double(after.total - before.total), 0.0, 1.0);
}

KernelMeasurement measureKernels(ExecContext& ctx, const std::vector<std::string>& candidates) {
    const auto before = readMachineTicks();
    const double own0 = processCpuSeconds();
    KernelMeasurement m;
    m.timings = measureKernelTimings(ctx, candidates);
    const auto after = readMachineTicks();
    const double ownTicks = (processCpuSeconds() - own0) * double(sysconf(_SC_CLK_TCK));
    if (before && after) m.othersCpuShare = othersCpuShare(*before, *after, ownTicks);
    return m;
}

}  // namespace cairn
