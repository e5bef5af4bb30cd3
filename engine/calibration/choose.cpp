// The calibration's choice: per family and regime the fastest timed path,
// unless the default (the best path by CPU features) is within a margin of it.
#include "cairn/kernel_calibration.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace cairn {

namespace {

// Another path must beat the default by more than this factor of its time.
// Decode: compared round by round and on one thread as well as on all, the
// AVX-512 decode paths of a Zen 4 guest differ by 5-30 %; best times of 3
// rounds on two threads against a 5 % margin kept the slower one in half of
// its calibrations (2026-12-07).
constexpr double kDecodeMargin = 1.03;
// Decode, the default's own kernels with another prefetch: no margin. They
// differ only in how the weights are fetched, with the same layout and bits,
// so nothing the measurement leaves out differs, and a pick of the slower
// of two equal ones costs nothing. The margin had kept the default, which
// is neither CPU's best: on a Zen 4 guest (family 25 model 17), Q4 decode
// went to `avx512vnni` in 4 of 18 calibrations and 3 of 10 (2026-12-08),
// where llama-1b Q4_0 decodes 7.4 % faster on `-hwpf` in the host's fast
// minutes and -0.5 to +4.9 % in its slow ones (one process alternating 16
// tokens a round); on the Intel Xeon (family 6 model 207) `-l2pf` led.
constexpr double kPrefetchVariantDecodeMargin = 1.0;
// Prefill: the AVX-512 paths share one GEMM, so they tie within ±3 % in the
// median (Zen 4), and paths that differ, differ by more than 30 % (AVX2's
// quantized GEMMs). A prefill path that reads another layout than the decode
// path chosen pays for an unpacking copy the measurement does not time
// (llama-1b F16 pp512 98.5 t/s against 105-107 when avx2-file had won the
// float prefill by noise).
constexpr double kPrefillMargin = 1.10;

bool usable(double seconds) { return seconds > 0 && std::isfinite(seconds); }

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// `path`'s time as a multiple of `def`'s: the median of the rounds' ratios
// where both have the same rounds, else of their fastest rounds.
double relativeTime(const KernelTiming& path, const KernelTiming& def) {
    std::vector<double> ratios;
    if (path.rounds.size() == def.rounds.size())
        for (size_t i = 0; i < path.rounds.size(); ++i)
            if (usable(path.rounds[i]) && usable(def.rounds[i])) ratios.push_back(path.rounds[i] / def.rounds[i]);
    return ratios.empty() ? path.seconds / def.seconds : medianOf(std::move(ratios));
}

}  // namespace

std::string_view kernelPathBase(std::string_view path) {
    for (std::string_view suffix : {"-l2pf", "-hwpf"})
        if (path.size() > suffix.size() && path.ends_with(suffix)) return path.substr(0, path.size() - suffix.size());
    return path;
}

KernelChoice chooseKernels(const std::vector<KernelTiming>& timings, const std::vector<std::string>& supported) {
    KernelChoice choice;
    const std::string fallback = supported.empty() ? std::string("scalar") : supported.front();
    for (KernelFamily f : kKernelFamilies)
        for (KernelRegime r : kKernelRegimes) {
            // Per thread count, the usable timing of each supported path, in
            // `supported` order (best by features first).
            std::map<int, std::vector<const KernelTiming*>> timed;
            for (const KernelTiming& t : timings) {
                if (t.family != f || t.regime != r || !usable(t.seconds)) continue;
                const auto it = std::find(supported.begin(), supported.end(), t.path);
                if (it == supported.end()) continue;
                auto& slots = timed.try_emplace(t.threads, supported.size(), nullptr).first->second;
                if (!slots[size_t(it - supported.begin())]) slots[size_t(it - supported.begin())] = &t;
            }
            // The default: the first supported path timed on any thread count.
            size_t def = supported.size();
            for (const auto& [threads, slots] : timed) {
                const auto first = std::find_if(slots.begin(), slots.end(), [](const KernelTiming* t) { return t; });
                def = std::min(def, size_t(first - slots.begin()));
            }
            if (def == supported.size()) {
                choice.at(f, r) = fallback;
                continue;
            }
            size_t pick = def;
            double pickTime = 1;  // relative to the default's
            for (size_t i = def + 1; i < supported.size(); ++i) {
                const bool variant = kernelPathBase(supported[i]) == supported[def];
                const double margin = r == KernelRegime::Prefill ? kPrefillMargin
                    : variant                                    ? kPrefetchVariantDecodeMargin
                                                                 : kDecodeMargin;
                double logSum = 0;
                int counts = 0;
                for (const auto& [threads, slots] : timed)
                    if (slots[i] && slots[def]) {
                        logSum += std::log(relativeTime(*slots[i], *slots[def]));
                        ++counts;
                    }
                if (counts == 0) continue;
                const double t = std::exp(logSum / counts);
                if (t * margin < 1 && t < pickTime) {
                    pick = i;
                    pickTime = t;
                }
            }
            choice.at(f, r) = supported[pick];
        }
    return choice;
}

}  // namespace cairn
