// The AVX2 path (x86-64 CPUs with AVX2, FMA and F16C): kernels_avx2_impl.h
// with maddubs + madd for the integer dots.
#include "tensor/kernels_avx2_impl.h"

namespace cairn::tensor::kernels {

const KernelSet* avx2Kernels() {
    static const KernelSet set{"avx2", packPlan, pack, rows, 16, readsRowTiles, quantizeToken32, quantizeTokenK};
    return &set;
}

const KernelSet* avx2FileLayoutKernels() {
    static const KernelSet set{"avx2-file", packPlan, pack, rows, 16, nullptr, quantizeToken32, quantizeTokenK};
    return &set;
}

}  // namespace cairn::tensor::kernels
