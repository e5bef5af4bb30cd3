// The calibration's choice: per family and regime the fastest timed path,
// unless the default (the best path by CPU features) is within 5 % of it.
#include "cairn/kernel_calibration.h"

#include <algorithm>
#include <cmath>

namespace cairn {

namespace {

// Another path must beat the default by more than this factor of its time.
constexpr double kMargin = 1.05;

}  // namespace

KernelChoice chooseKernels(const std::vector<KernelTiming>& timings, const std::vector<std::string>& supported) {
    KernelChoice choice;
    const std::string fallback = supported.empty() ? std::string("scalar") : supported.front();
    for (KernelFamily f : kKernelFamilies)
        for (KernelRegime r : kKernelRegimes) {
            // Best time per supported path, in `supported` order (best by features first).
            std::vector<double> best(supported.size(), INFINITY);
            for (const KernelTiming& t : timings) {
                if (t.family != f || t.regime != r || !(t.seconds > 0) || !std::isfinite(t.seconds)) continue;
                const auto it = std::find(supported.begin(), supported.end(), t.path);
                if (it != supported.end())
                    best[size_t(it - supported.begin())] = std::min(best[size_t(it - supported.begin())], t.seconds);
            }
            const auto def = std::find_if(best.begin(), best.end(), [](double s) { return std::isfinite(s); });
            if (def == best.end()) {
                choice.at(f, r) = fallback;
                continue;
            }
            const auto fastest = std::min_element(best.begin(), best.end());  // first of equal times
            const auto pick = *fastest * kMargin < *def ? fastest : def;
            choice.at(f, r) = supported[size_t(pick - best.begin())];
        }
    return choice;
}

}  // namespace cairn
