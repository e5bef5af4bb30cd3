// Rows of floats to IEEE binary16 and back, for the attention memory's f16
// rows (memory/kv_cache) and the f16 rounding of each query that meets them
// (model/attention): element by element the bits of f32ToF16 / f16ToF32
// (tensor/quant.h), NaNs included, 16 (AVX-512) or 8 (F16C) at a time on
// x86. Why: a llama-1b decode token converts 16 x 1024 values writing K and
// V (on one thread, while the other waits) and 16 x 2048 rounding queries,
// and one at a time through the bit-pattern routine took 1.7 ns each. AMD
// EPYC Zen 4 (family 25 model 17), llama-1b Q4_0, one process decoding 16
// tokens from an empty context each way in turn, 120 rounds, median of the
// rounds' speed-ups: host fast +0.9 %, +1.1 % (74-113 rounds), slow -0.0 %,
// -0.1 %.
#pragma once

#include <cstdint>

namespace cairn::tensor {

// How many elements a step converts; the widest this CPU has is used.
enum class HalfRowWidth { Scalar, F16c8, Avx512x16 };

bool cpuHasHalfRowWidth(HalfRowWidth width);

// dst[i] = f32ToF16(src[i]) for i < n.
void f32ToF16Row(const float* src, uint16_t* dst, int64_t n);
// dst[i] = f16ToF32(f32ToF16(src[i])) for i < n; src may be dst.
void roundRowThroughF16(const float* src, float* dst, int64_t n);

// The same on a given width (the tests compare each with the scalar one);
// `width` must be one this CPU has.
void f32ToF16Row(const float* src, uint16_t* dst, int64_t n, HalfRowWidth width);
void roundRowThroughF16(const float* src, float* dst, int64_t n, HalfRowWidth width);

}  // namespace cairn::tensor
