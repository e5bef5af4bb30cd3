// The Armv8.0 Advanced SIMD path (every aarch64 CPU): kernels_neon_impl.h
// with widening multiplies for the integer dots.
#include "tensor/kernels_neon_impl.h"

namespace cairn::tensor::kernels {

const KernelSet* neonKernels() {
    static const KernelSet set{"neon", nullptr, nullptr, rows, kRows};
    return &set;
}

}  // namespace cairn::tensor::kernels
