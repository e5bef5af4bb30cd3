// Reference quantizers of the K formats (ports of ggml's quantize_row_q*_K_ref),
// reached through quantizeRow(); `n` a multiple of 256.
#pragma once

#include "tensor/blocks.h"

#include <cstdint>

namespace cairn::tensor {

void quantizeRowQ2_K(const float* in, BlockQ2_K* out, int64_t n);
void quantizeRowQ3_K(const float* in, BlockQ3_K* out, int64_t n);
void quantizeRowQ4_K(const float* in, BlockQ4_K* out, int64_t n);
void quantizeRowQ5_K(const float* in, BlockQ5_K* out, int64_t n);
void quantizeRowQ6_K(const float* in, BlockQ6_K* out, int64_t n);

}  // namespace cairn::tensor
