// The Armv8.2 dot-product path (SDOT: Cortex-A55/A76 on, Apple M1, Graviton 2
// on): kernels_neon_impl.h built with +dotprod (see CMakeLists.txt).
#include "tensor/kernels_neon_impl.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "kernels_neon_dotprod.cpp must be built with +dotprod"
#endif

namespace cairn::tensor::kernels {

const KernelSet* neonDotprodKernels() {
    static const KernelSet set{"neon-dotprod", nullptr, nullptr, rows, kRows};
    return &set;
}

}  // namespace cairn::tensor::kernels
