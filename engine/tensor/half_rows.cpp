#include "tensor/half_rows.h"

#include "tensor/quant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CAIRN_HALF_ROWS_X86 1
#endif

namespace cairn::tensor {

namespace {

void scalarF16(const float* src, uint16_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f32ToF16(src[i]);
}

void scalarRound(const float* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f16ToF32(f32ToF16(src[i]));
}

#ifdef CAIRN_HALF_ROWS_X86
// The conversion instructions round to nearest even by their immediate (not
// the MXCSR), as f32ToF16 does; only a NaN's payload differs (f32ToF16 gives
// the quiet NaN 0x7e00), so a step holding a NaN is done one at a time.
constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__attribute__((target("avx,f16c"))) void f16cF16(const float* src, uint16_t* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
            scalarF16(src + i, dst + i, 8);
            continue;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(v, kRound));
    }
    scalarF16(src + i, dst + i, n - i);
}

__attribute__((target("avx,f16c"))) void f16cRound(const float* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
            scalarRound(src + i, dst + i, 8);
            continue;
        }
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, kRound)));
    }
    scalarRound(src + i, dst + i, n - i);
}

// (The all-ones masked forms are the same instructions; GCC 12 warns about
// the unmasked ones' undefined source under a target attribute.)
__attribute__((target("avx512f"))) void avx512F16(const float* src, uint16_t* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(src + i);
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
            scalarF16(src + i, dst + i, 16);
            continue;
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_maskz_cvtps_ph(0xffff, v, kRound));
    }
    scalarF16(src + i, dst + i, n - i);
}

__attribute__((target("avx512f"))) void avx512Round(const float* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(src + i);
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
            scalarRound(src + i, dst + i, 16);
            continue;
        }
        _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps(0xffff, _mm512_maskz_cvtps_ph(0xffff, v, kRound)));
    }
    scalarRound(src + i, dst + i, n - i);
}
#endif

HalfRowWidth widest() {
    static const HalfRowWidth w = cpuHasHalfRowWidth(HalfRowWidth::Avx512x16) ? HalfRowWidth::Avx512x16
        : cpuHasHalfRowWidth(HalfRowWidth::F16c8)                             ? HalfRowWidth::F16c8
                                                                              : HalfRowWidth::Scalar;
    return w;
}

}  // namespace

bool cpuHasHalfRowWidth(HalfRowWidth width) {
    switch (width) {
    case HalfRowWidth::Scalar: return true;
#ifdef CAIRN_HALF_ROWS_X86
    case HalfRowWidth::F16c8: return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
    case HalfRowWidth::Avx512x16: return __builtin_cpu_supports("avx512f");
#endif
    default: return false;
    }
}

void f32ToF16Row(const float* src, uint16_t* dst, int64_t n, HalfRowWidth width) {
    switch (width) {
#ifdef CAIRN_HALF_ROWS_X86
    case HalfRowWidth::Avx512x16: return avx512F16(src, dst, n);
    case HalfRowWidth::F16c8: return f16cF16(src, dst, n);
#endif
    default: return scalarF16(src, dst, n);
    }
}

void roundRowThroughF16(const float* src, float* dst, int64_t n, HalfRowWidth width) {
    switch (width) {
#ifdef CAIRN_HALF_ROWS_X86
    case HalfRowWidth::Avx512x16: return avx512Round(src, dst, n);
    case HalfRowWidth::F16c8: return f16cRound(src, dst, n);
#endif
    default: return scalarRound(src, dst, n);
    }
}

void f32ToF16Row(const float* src, uint16_t* dst, int64_t n) { f32ToF16Row(src, dst, n, widest()); }

void roundRowThroughF16(const float* src, float* dst, int64_t n) { roundRowThroughF16(src, dst, n, widest()); }

}  // namespace cairn::tensor
