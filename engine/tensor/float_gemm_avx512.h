// The AVX-512 float-weight GEMM (prefill with F32/F16/BF16 weights), in
// float_gemm_avx512.cpp; called only from kernels_avx512.cpp.
#pragma once

#include "tensor/kernels_common.h"

namespace cairn::tensor::kernels::avx512 {

// The activation layout of the GEMM (groups of 12 tokens); no groups when the
// call runs the per-token matvec or K is not a multiple of 16.
PackPlan floatPackPlan(const Activations& a, int64_t minTokens);
void packFloatTokens(const Activations& a, uint8_t* out, int64_t g0, int64_t g1);
// Rows [r0, r1) for every token, from the packed activations.
void floatGemm(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy);

}  // namespace cairn::tensor::kernels::avx512
