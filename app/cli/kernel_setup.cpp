#include "kernel_setup.h"

#include "cairn/exec.h"
#include "cairn/kernel_choice.h"

#include <cstdio>
#include <cstdlib>

namespace cairn::cli {

KernelSetup kernelSetupFrom(Args& args) {
    KernelSetup s;
    if (auto file = args.option("", "--kernel-cache")) s.cacheFile = *file;
    if (args.flag("--calibrate") && !s.cacheFile) s.cacheFile = defaultKernelCacheFile();
    return s;
}

std::string defaultKernelCacheFile() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    const char* home = std::getenv("HOME");
    std::string path(xdg && *xdg == '/' ? xdg : home && *home ? home : ".");
    if (!(xdg && *xdg == '/') && home && *home) path.append("/.local/share");
    return path.append("/cairn/cairn/kernel-calibration.json");
}

std::string setUpKernels(const KernelSetup& setup, int threads) {
    if (!setup.cacheFile) return "default";
    if (kernelPathOverridden()) {
        std::fprintf(stderr, "kernels: CAIRN_KERNELS overrides the calibration\n");
        return "override";
    }
    ExecContext ctx(threads);
    KernelCalibrationOptions options;
    // Test hook: the share of the CPU other programs took while it measured,
    // instead of /proc/stat's (tests run side by side, so the real figure
    // would decide whether the cache is written). Never set in normal use.
    if (const char* load = std::getenv("CAIRN_TEST_CALIBRATION_LOAD"); load && *load) {
        const double share = std::strtod(load, nullptr);
        options.measure = [share](ExecContext& c, const std::vector<std::string>& candidates) {
            return KernelMeasurement{measureKernelTimings(c, candidates), share};
        };
    }
    const KernelCalibration c = loadOrCalibrateKernels(*setup.cacheFile, ctx, options);
    if (!c.cacheNote.empty()) std::fprintf(stderr, "%s; measured again\n", c.cacheNote.c_str());
    if (!c.notCached.empty()) std::fprintf(stderr, "%s\n", c.notCached.c_str());
    applyKernelChoice(c.choice);
    if (c.fromCache) std::fprintf(stderr, "kernels: calibration from %s\n", setup.cacheFile->c_str());
    else
        std::fprintf(stderr, "kernels: calibrated in %.0f ms on %d threads (%s)\n", c.measureMs, threads,
                     c.notCached.empty() ? setup.cacheFile->c_str() : "not cached");
    return c.fromCache ? "cache" : "measured";
}

}  // namespace cairn::cli
