// Which kernel path matmul runs, per weight family and regime. Every path
// gives the same bits (tensor/kernels_common.h), so the choice changes speed
// only. Without a choice applied, matmul runs the best path by CPU features
// (or the one CAIRN_KERNELS names) everywhere; cairn/kernel_calibration.h
// measures which path is fastest on this machine and applies that.
#pragma once

#include "cairn/tensor_type.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// Decode: one token, every weight byte streamed from memory once; prefill:
// several tokens per call, compute bound.
enum class KernelRegime { Decode, Prefill };
// Weight types grouped by the kernel code they share: the 32-element 4/5-bit
// formats (Q4_0, Q4_1, Q5_0, Q5_1), Q8_0, the K formats (Q2_K … Q6_K) and
// the float formats (F32, F16, BF16).
enum class KernelFamily { Q4, Q8, K, Float };

inline constexpr KernelRegime kKernelRegimes[] = {KernelRegime::Decode, KernelRegime::Prefill};
inline constexpr KernelFamily kKernelFamilies[] = {KernelFamily::Q4, KernelFamily::Q8, KernelFamily::K,
                                                   KernelFamily::Float};

KernelFamily kernelFamilyOf(TensorType type);
KernelRegime kernelRegimeOf(int64_t nTokens);
std::string_view kernelFamilyName(KernelFamily f);  // "q4", "q8", "k", "float"
std::string_view kernelRegimeName(KernelRegime r);  // "decode", "prefill"

// A path name per (family, regime); an empty name means the default path.
struct KernelChoice {
    std::array<std::array<std::string, 2>, 4> path;
    std::string& at(KernelFamily f, KernelRegime r) { return path[size_t(f)][size_t(r)]; }
    const std::string& at(KernelFamily f, KernelRegime r) const { return path[size_t(f)][size_t(r)]; }
    bool operator==(const KernelChoice&) const = default;
};

// Paths this build has and this CPU runs, best by features first, "scalar" last.
std::vector<std::string> supportedKernelPaths();

// The path matmul runs now for a family and regime.
std::string kernelPathFor(KernelFamily f, KernelRegime r);

// Whether CAIRN_KERNELS names a path: it then overrides every choice.
bool kernelPathOverridden();

// Makes matmul run `choice` (empty entries: the default path). Returns false,
// changing nothing, when CAIRN_KERNELS overrides it; a name this build or CPU
// lacks is a cairn::Error, changing nothing. Not while a matmul runs.
// (tensor::forceKernelPath, for tests and benchmarks, replaces any choice.)
bool applyKernelChoice(const KernelChoice& choice);

// "decode q4=avx2 q8=avx2 k=avx2 float=avx2, prefill q4=… ": what kernelPathFor gives.
std::string kernelChoiceSummary();

}  // namespace cairn
