#include "tensor/half_rows.h"

#include "tensor/quant.h"

#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CAIRN_HALF_ROWS_X86 1
#endif

namespace cairn::tensor {

namespace {

// Out: uint16_t (f16 bits) or float (rounded through f16).
template <class Out>
void scalarRows(const float* src, Out* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<Out, float>) dst[i] = f16ToF32(f32ToF16(src[i]));
        else dst[i] = f32ToF16(src[i]);
    }
}

#ifdef CAIRN_HALF_ROWS_X86
// The conversion instructions round to nearest even by their immediate (not
// the MXCSR), as f32ToF16 does; only a NaN's payload differs (f32ToF16 gives
// the quiet NaN 0x7e00), so a step holding a NaN is done one at a time.
constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

template <class Out>
__attribute__((target("avx,f16c"))) void f16cRows(const float* src, Out* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) scalarRows(src + i, dst + i, 8);
        else if constexpr (std::is_same_v<Out, float>)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, kRound)));
        else _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(v, kRound));
    }
    scalarRows(src + i, dst + i, n - i);
}

// (The all-ones masked forms are the same instructions; GCC 12 warns about
// the unmasked ones' undefined source under a target attribute.)
template <class Out>
__attribute__((target("avx512f"))) void avx512Rows(const float* src, Out* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(src + i);
        const __m256i h = _mm512_maskz_cvtps_ph(0xffff, v, kRound);
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) scalarRows(src + i, dst + i, 16);
        else if constexpr (std::is_same_v<Out, float>) _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps(0xffff, h));
        else _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), h);
    }
    scalarRows(src + i, dst + i, n - i);
}
#endif

template <class Out>
void rows(const float* src, Out* dst, int64_t n, HalfRowWidth width) {
    switch (width) {
#ifdef CAIRN_HALF_ROWS_X86
    case HalfRowWidth::Avx512x16: return avx512Rows(src, dst, n);
    case HalfRowWidth::F16c8: return f16cRows(src, dst, n);
#endif
    default: return scalarRows(src, dst, n);
    }
}

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

void f32ToF16Row(const float* src, uint16_t* dst, int64_t n, HalfRowWidth width) { rows(src, dst, n, width); }

void roundRowThroughF16(const float* src, float* dst, int64_t n, HalfRowWidth width) { rows(src, dst, n, width); }

void f32ToF16Row(const float* src, uint16_t* dst, int64_t n) { f32ToF16Row(src, dst, n, widest()); }

void roundRowThroughF16(const float* src, float* dst, int64_t n) { roundRowThroughF16(src, dst, n, widest()); }

}  // namespace cairn::tensor
