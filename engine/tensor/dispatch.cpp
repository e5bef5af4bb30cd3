// Run-time choice of the kernel path: the best one this CPU runs, or a lower
// one named by CAIRN_KERNELS=scalar|avx2|avx2-file|avx2-vnni|avx2-vnni-file|avx512|neon|neon-dotprod (tests and benchmarks use
// forceKernelPath to visit every path the machine supports). On top of that
// base path, applyKernelChoice (the calibration's measured choice) may name
// another path per weight family and regime.
#include "cairn/error.h"
#include "cairn/kernel_choice.h"
#include "tensor/kernels_common.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include <atomic>
#include <cstdlib>
#include <string>

namespace cairn::tensor {
namespace kernels {

#if !(defined(__x86_64__) || defined(_M_X64))
const KernelSet* avx2Kernels() { return nullptr; }
const KernelSet* avx2VnniKernels() { return nullptr; }
const KernelSet* avx2FileLayoutKernels() { return nullptr; }
const KernelSet* avx2VnniFileLayoutKernels() { return nullptr; }
const KernelSet* avx512Kernels() { return nullptr; }
const KernelSet* avx512L2PrefetchKernels() { return nullptr; }
const KernelSet* avx512HardwarePrefetchKernels() { return nullptr; }
#endif
#if !defined(__aarch64__)
const KernelSet* neonKernels() { return nullptr; }
const KernelSet* neonDotprodKernels() { return nullptr; }
#endif

namespace {

bool cpuHasAvx2() {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

// AVX-VNNI: the VEX-encoded 256-bit vpdpbusd/vpdpwssd (Intel Alder Lake and
// later client cores, Sapphire Rapids, AMD Zen 5).
bool cpuHasAvxVnni() {
#if defined(__x86_64__) && defined(__GNUC__)
    return cpuHasAvx2() && __builtin_cpu_supports("avxvnni");
#else
    return false;
#endif
}

bool cpuHasAvx512() {
#if defined(__x86_64__) && defined(__GNUC__)
    return cpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
}

// Advanced SIMD is part of every aarch64 CPU; the dot-product instructions
// (Armv8.2, optional before 8.4) are announced by the kernel.
bool cpuHasArmDotprod() {
#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_ASIMDDP)
    return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
    return false;
#endif
}

// Paths this binary has and this CPU runs, best first.
std::vector<const KernelSet*> supported() {
    std::vector<const KernelSet*> out;
    if (avx512Kernels() && cpuHasAvx512()) out.push_back(avx512Kernels());
    if (avx512L2PrefetchKernels() && cpuHasAvx512()) out.push_back(avx512L2PrefetchKernels());
    if (avx512HardwarePrefetchKernels() && cpuHasAvx512()) out.push_back(avx512HardwarePrefetchKernels());
    if (avx2VnniKernels() && cpuHasAvxVnni()) out.push_back(avx2VnniKernels());
    if (avx2VnniFileLayoutKernels() && cpuHasAvxVnni()) out.push_back(avx2VnniFileLayoutKernels());
    if (avx2Kernels() && cpuHasAvx2()) out.push_back(avx2Kernels());
    if (avx2FileLayoutKernels() && cpuHasAvx2()) out.push_back(avx2FileLayoutKernels());
    if (neonDotprodKernels() && cpuHasArmDotprod()) out.push_back(neonDotprodKernels());
    if (neonKernels()) out.push_back(neonKernels());
    out.push_back(&scalarKernels());
    return out;
}

const KernelSet* byName(std::string_view name) {
    if (name == "avx512") name = "avx512vnni";
    for (const KernelSet* k : supported())
        if (name == k->name) return k;
    return nullptr;
}

const KernelSet* fromEnvironment() {
    if (const char* env = std::getenv("CAIRN_KERNELS"); env && *env) return byName(env);
    return nullptr;
}

const KernelSet* initial() {
    if (const KernelSet* k = fromEnvironment()) return k;
    return supported().front();
}

std::atomic<const KernelSet*> current{nullptr};
// Per (family, regime): the applied choice, nullptr for the base path.
std::atomic<const KernelSet*> chosen[4][2]{};

void clearChoice() {
    for (auto& family : chosen)
        for (auto& k : family) k.store(nullptr, std::memory_order_release);
}

}  // namespace

const KernelSet& activeKernels() {
    const KernelSet* k = current.load(std::memory_order_acquire);
    if (!k) {
        const KernelSet* init = initial();
        current.compare_exchange_strong(k, init);
        k = current.load(std::memory_order_acquire);
    }
    return *k;
}

const KernelSet& activeKernels(TensorType type, int64_t nTokens) {
    const KernelSet* k =
        chosen[size_t(kernelFamilyOf(type))][size_t(kernelRegimeOf(nTokens))].load(std::memory_order_acquire);
    return k ? *k : activeKernels();
}

const KernelSet* kernelsNamed(std::string_view name) { return byName(name); }

}  // namespace kernels

const char* kernelPath() { return kernels::activeKernels().name; }

std::vector<std::string> availableKernelPaths() {
    std::vector<std::string> names;
    for (const auto* k : kernels::supported()) names.emplace_back(k->name);
    return names;
}

bool forceKernelPath(std::string_view name) {
    const kernels::KernelSet* k = kernels::byName(name);
    if (!k) return false;
    kernels::current.store(k, std::memory_order_release);
    kernels::clearChoice();
    return true;
}

}  // namespace cairn::tensor

namespace cairn {

KernelFamily kernelFamilyOf(TensorType type) {
    switch (type) {
    case TensorType::Q8_0: return KernelFamily::Q8;
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K: return KernelFamily::K;
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16: return KernelFamily::Float;
    default: return KernelFamily::Q4;  // Q4_0, Q4_1, Q5_0, Q5_1 (matmul refuses the rest)
    }
}

KernelRegime kernelRegimeOf(int64_t nTokens) { return nTokens <= 1 ? KernelRegime::Decode : KernelRegime::Prefill; }

std::string_view kernelFamilyName(KernelFamily f) {
    switch (f) {
    case KernelFamily::Q4: return "q4";
    case KernelFamily::Q8: return "q8";
    case KernelFamily::K: return "k";
    case KernelFamily::Float: return "float";
    }
    return "?";
}

std::string_view kernelRegimeName(KernelRegime r) { return r == KernelRegime::Decode ? "decode" : "prefill"; }

std::vector<std::string> supportedKernelPaths() { return tensor::availableKernelPaths(); }

std::string kernelPathFor(KernelFamily f, KernelRegime r) {
    const tensor::kernels::KernelSet* k = tensor::kernels::chosen[size_t(f)][size_t(r)].load(std::memory_order_acquire);
    return k ? k->name : tensor::kernels::activeKernels().name;
}

bool kernelPathOverridden() { return tensor::kernels::fromEnvironment() != nullptr; }

bool applyKernelChoice(const KernelChoice& choice) {
    if (kernelPathOverridden()) return false;
    const tensor::kernels::KernelSet* sets[4][2]{};
    for (KernelFamily f : kKernelFamilies)
        for (KernelRegime r : kKernelRegimes) {
            const std::string& name = choice.at(f, r);
            if (name.empty()) continue;
            sets[size_t(f)][size_t(r)] = tensor::kernels::byName(name);
            if (!sets[size_t(f)][size_t(r)]) {
                std::string what = "path \"";  // appended, not +: GCC 12 warns (-Wrestrict) on the + chain
                what.append(name.substr(0, 40)).append("\" for ").append(kernelFamilyName(f)).append(" ");
                what.append(kernelRegimeName(r)).append(" is not supported here");
                throw Error("kernel choice", what);
            }
        }
    for (KernelFamily f : kKernelFamilies)
        for (KernelRegime r : kKernelRegimes)
            tensor::kernels::chosen[size_t(f)][size_t(r)].store(sets[size_t(f)][size_t(r)], std::memory_order_release);
    return true;
}

std::string kernelChoiceSummary() {
    std::string out;
    for (KernelRegime r : kKernelRegimes) {
        if (!out.empty()) out += ", ";
        out += kernelRegimeName(r);
        for (KernelFamily f : kKernelFamilies)
            out.append(" ").append(kernelFamilyName(f)).append("=").append(kernelPathFor(f, r));
    }
    return out;
}

}  // namespace cairn
