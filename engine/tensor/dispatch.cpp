// Run-time choice of the kernel path: the best one this CPU runs, or a lower
// one named by CAIRN_KERNELS=scalar|avx2|avx512|neon|neon-dotprod (tests and benchmarks use
// forceKernelPath to visit every path the machine supports).
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
const KernelSet* avx512Kernels() { return nullptr; }
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
    if (avx2Kernels() && cpuHasAvx2()) out.push_back(avx2Kernels());
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

const KernelSet* initial() {
    if (const char* env = std::getenv("CAIRN_KERNELS"); env && *env) {
        if (const KernelSet* k = byName(env)) return k;
    }
    return supported().front();
}

std::atomic<const KernelSet*> current{nullptr};

} // namespace

const KernelSet& activeKernels() {
    const KernelSet* k = current.load(std::memory_order_acquire);
    if (!k) {
        const KernelSet* init = initial();
        current.compare_exchange_strong(k, init);
        k = current.load(std::memory_order_acquire);
    }
    return *k;
}

} // namespace kernels

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
    return true;
}

} // namespace cairn::tensor
