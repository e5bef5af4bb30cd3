// Scalar reference code for every supported format: dequantization, ggml's
// reference quantizers, and dot products. This is the oracle the SIMD kernels
// are tested against; it favours clarity over speed.
#pragma once

#include "cairn/tensor_type.h"
#include "tensor/blocks.h"

#include <cstdint>

namespace cairn::tensor {

// Half-precision conversions (IEEE binary16 and bfloat16), round to nearest even.
float f16ToF32(uint16_t h);
uint16_t f32ToF16(float f);
float bf16ToF32(uint16_t h);
uint16_t f32ToBf16(float f);

// `n` elements of a row of `type` (n a multiple of the block size) to f32.
void dequantizeRow(TensorType type, const void* row, float* out, int64_t n);

// ggml's reference quantizer for `type` (quantize_row_*_ref), byte-identical output.
void quantizeRow(TensorType type, const float* in, void* row, int64_t n);

// Activation quantizers the kernels use (ggml's quantize_row_q8_0_ref and
// quantize_row_q8_K_ref); `n` a multiple of 32 resp. 256.
void quantizeRowQ8_0(const float* in, BlockQ8_0* out, int64_t n);
void quantizeRowQ8K(const float* in, BlockQ8_K* out, int64_t n);

// Reference dot product of a stored row with f32 activations: dequantize, then
// sum in element order in double precision, rounded once to float.
float dotReference(TensorType type, const void* row, const float* x, int64_t n);

}  // namespace cairn::tensor
