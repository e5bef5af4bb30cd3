// The AVX2 path with AVX-VNNI (Intel Alder Lake and later client cores,
// which have no AVX-512): kernels_avx2_impl.h built with -mavxvnni (see
// engine/CMakeLists.txt), one vpdpbusd for each maddubs + madd + add.
#define CAIRN_AVX_VNNI 1
#include "tensor/kernels_avx2_impl.h"

#if !defined(__AVXVNNI__)
#error "kernels_avx2_vnni.cpp must be built with -mavxvnni"
#endif

namespace cairn::tensor::kernels {

const KernelSet* avx2VnniKernels() {
    static const KernelSet set{"avx2-vnni", packPlan, pack, rows, 16, readsRowTiles, quantizeToken32, quantizeTokenK};
    return &set;
}

const KernelSet* avx2VnniFileLayoutKernels() {
    static const KernelSet set{"avx2-vnni-file", packPlan, pack, rows, 16, nullptr, quantizeToken32, quantizeTokenK};
    return &set;
}

}  // namespace cairn::tensor::kernels
