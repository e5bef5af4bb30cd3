// f16 and bf16 conversions: exhaustive round trips, every rounding boundary
// and tie, subnormals, infinities and NaN.
#include "tensor/half_rows.h"
#include "tensor/quant.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace cairn::tensor;

namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float fromBits(uint32_t u) { return std::bit_cast<float>(u); }
bool isF16NaN(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool isBf16NaN(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0; }

// The value of a positive bf16 bit pattern, computed from the definition (not
// by bit casting), with the pattern past the largest finite one read as 2^128.
double bf16Value(uint32_t p) {
    const int e = int(p >> 7) & 0xff;
    const int m = int(p & 0x7f);
    return e == 0 ? std::ldexp(double(m), -133) : std::ldexp(double(128 + m), e - 134);
}

}  // namespace

class TestQuantHalf : public QObject {
    Q_OBJECT
private slots:
    void f16KnownValues() {
        QCOMPARE(f16ToF32(0x3c00), 1.0f);
        QCOMPARE(f16ToF32(0xc000), -2.0f);
        QCOMPARE(f16ToF32(0x7bff), 65504.0f);
        QCOMPARE(f16ToF32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
        QCOMPARE(f16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
        QCOMPARE(f16ToF32(0x03ff), std::ldexp(1023.0f, -24));
        QCOMPARE(bits(f16ToF32(0x8000)), 0x80000000u);  // -0
        QCOMPARE(f16ToF32(0x7c00), std::numeric_limits<float>::infinity());
        QCOMPARE(f16ToF32(0xfc00), -std::numeric_limits<float>::infinity());
        QVERIFY(std::isnan(f16ToF32(0x7e00)));
        QVERIFY(std::isnan(f16ToF32(0xfc01)));
    }

    // Every half converts to float and back unchanged (NaN stays NaN, same sign).
    void f16ExhaustiveRoundTrip() {
        for (uint32_t h = 0; h <= 0xffff; ++h) {
            const float f = f16ToF32(uint16_t(h));
            const uint16_t back = f32ToF16(f);
            if (isF16NaN(uint16_t(h))) {
                QVERIFY(std::isnan(f));
                QVERIFY(isF16NaN(back));
                QCOMPARE(back & 0x8000, h & 0x8000);
            } else if (back != h) {
                QFAIL(qPrintable(QString("half 0x%1 came back as 0x%2").arg(h, 4, 16).arg(back, 4, 16)));
            }
        }
    }

    // Between every two adjacent non-negative halves a < b (subnormals, normals,
    // and 65504 -> inf): the midpoint is a tie that goes to the even one, and
    // the floats just below and above it go to a and b.
    void f16RoundingBoundariesAndTies() {
        for (uint32_t h = 0; h < 0x7c00; ++h) {
            const float a = f16ToF32(uint16_t(h));
            const float b = h + 1 == 0x7c00 ? 65536.0f : f16ToF32(uint16_t(h + 1));  // 65536: where inf would sit
            const float mid = a + (b - a) / 2;  // exact: needs one more bit than a half has
            const uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
            for (const uint16_t sign : {uint16_t(0), uint16_t(0x8000)}) {
                const float s = sign ? -1.0f : 1.0f;
                QCOMPARE(f32ToF16(s * mid), uint16_t(sign | even));
                QCOMPARE(f32ToF16(s * std::nextafter(mid, 0.0f)), uint16_t(sign | h));
                QCOMPARE(f32ToF16(s * std::nextafter(mid, 1e30f)), uint16_t(sign | (h + 1)));
            }
        }
    }

    void f16Specials() {
        const float inf = std::numeric_limits<float>::infinity();
        QCOMPARE(f32ToF16(inf), uint16_t(0x7c00));
        QCOMPARE(f32ToF16(-inf), uint16_t(0xfc00));
        QCOMPARE(f32ToF16(1e6f), uint16_t(0x7c00));
        QCOMPARE(f32ToF16(std::numeric_limits<float>::max()), uint16_t(0x7c00));
        QCOMPARE(f32ToF16(-0.0f), uint16_t(0x8000));
        QCOMPARE(f32ToF16(fromBits(0x00000001)), uint16_t(0));  // f32 subnormal -> 0
        QCOMPARE(f32ToF16(fromBits(0x807fffff)), uint16_t(0x8000));  // keeps the sign
        QCOMPARE(f32ToF16(std::ldexp(1.0f, -25)), uint16_t(0));  // tie -> even (0)
        QCOMPARE(f32ToF16(std::ldexp(1.5f, -25)), uint16_t(1));
        QVERIFY(isF16NaN(f32ToF16(std::numeric_limits<float>::quiet_NaN())));
        QVERIFY(isF16NaN(f32ToF16(fromBits(0x7f800001))));  // signalling NaN stays NaN
        QCOMPARE(f32ToF16(fromBits(0xff800001)) & 0x8000, 0x8000);
    }

#if defined(__FLT16_MAX__)
    // Independent oracle: the compiler's own float -> _Float16 conversion (IEEE RNE).
    void f16MatchesCompilerConversion() {
        std::mt19937 rng(7);
        for (int i = 0; i < 200000; ++i) {
            const float f = fromBits(rng());
            if (std::isnan(f)) continue;
            const _Float16 h = static_cast<_Float16>(f);
            QCOMPARE(f32ToF16(f), std::bit_cast<uint16_t>(h));
        }
    }
#endif

    // The row conversions on every width this CPU has give f32ToF16's bits
    // (and f16ToF32 of them) for every element: every half's value, the
    // midpoints between halves and their neighbours, random patterns,
    // infinities, NaNs with any payload (in some steps only), at every
    // offset and length, in place too.
    void rowsMatchTheElementConversions() {
        std::vector<float> in;
        for (uint32_t h = 0; h < 0x7c00; ++h) {
            const float a = f16ToF32(uint16_t(h)), b = h + 1 == 0x7c00 ? 65536.0f : f16ToF32(uint16_t(h + 1));
            const float mid = a + (b - a) / 2;
            for (const float s : {1.0f, -1.0f})
                for (const float f : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)})
                    in.push_back(s * f);
        }
        std::mt19937 rng(5);
        for (int i = 0; i < 100000; ++i) in.push_back(fromBits(rng()));  // NaNs among them
        for (const uint32_t u : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffa50001u, 0x00000001u})
            in.push_back(fromBits(u));
        std::vector<uint16_t> want(in.size());
        std::vector<float> wantRounded(in.size());
        for (size_t i = 0; i < in.size(); ++i) {
            want[i] = f32ToF16(in[i]);
            wantRounded[i] = f16ToF32(want[i]);
        }
        int widths = 0;
        for (const HalfRowWidth w : {HalfRowWidth::Scalar, HalfRowWidth::F16c8, HalfRowWidth::Avx512x16}) {
            if (!cpuHasHalfRowWidth(w)) continue;
            ++widths;
            std::vector<uint16_t> got(in.size());
            std::vector<float> rounded(in.size());
            f32ToF16Row(in.data(), got.data(), int64_t(in.size()), w);
            roundRowThroughF16(in.data(), rounded.data(), int64_t(in.size()), w);
            for (size_t i = 0; i < in.size(); ++i) {
                if (got[i] != want[i] || bits(rounded[i]) != bits(wantRounded[i]))
                    QFAIL(qPrintable(QString("width %1, 0x%2: 0x%3 / 0x%4, want 0x%5 / 0x%6")
                                         .arg(int(w))
                                         .arg(bits(in[i]), 8, 16)
                                         .arg(got[i], 4, 16)
                                         .arg(bits(rounded[i]), 8, 16)
                                         .arg(want[i], 4, 16)
                                         .arg(bits(wantRounded[i]), 8, 16)));
            }
            // Every start and length up to two steps (tails, one step, a step and a tail), in place.
            for (int64_t start = 0; start < 17; ++start)
                for (int64_t n = 0; n <= 33; ++n) {
                    std::vector<uint16_t> part(size_t(n) + 1, 0xabcd);
                    f32ToF16Row(in.data() + start, part.data(), n, w);
                    std::vector<float> same(in.begin() + start, in.begin() + start + n);
                    roundRowThroughF16(same.data(), same.data(), n, w);
                    QCOMPARE(part[size_t(n)], uint16_t(0xabcd));  // nothing written past n
                    for (int64_t i = 0; i < n; ++i) {
                        QCOMPARE(part[size_t(i)], want[size_t(start + i)]);
                        QCOMPARE(bits(same[size_t(i)]), bits(wantRounded[size_t(start + i)]));
                    }
                }
        }
        QVERIFY(widths >= 1);
    }

    void bf16ExhaustiveRoundTrip() {
        for (uint32_t h = 0; h <= 0xffff; ++h) {
            const float f = bf16ToF32(uint16_t(h));
            QCOMPARE(bits(f), h << 16);
            if (!isBf16NaN(uint16_t(h))) QCOMPARE(f32ToBf16(f), uint16_t(h));
        }
    }

    // Random bit patterns: the result is the nearer of the two neighbouring
    // bf16 values by exact comparison in double, ties to even mantissa.
    void bf16RoundsToNearestEven() {
        std::mt19937 rng(11);
        for (int i = 0; i < 200000; ++i) {
            uint32_t u = rng();
            if (i % 4 == 0) u = (u & 0xffff0000u) | 0x8000u;  // force exact ties often
            const float f = fromBits(u);
            if (std::isnan(f) || std::isinf(f)) continue;
            const uint32_t lo = (u >> 16) & 0x7fff;
            const double x = std::fabs(double(f));
            const double below = bf16Value(lo), above = bf16Value(lo + 1);
            uint32_t want = (x - below < above - x) ? lo : (x - below > above - x) ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
            want |= (u >> 16) & 0x8000;
            QCOMPARE(uint32_t(f32ToBf16(f)), want);
        }
        QCOMPARE(f32ToBf16(fromBits(0x3f808000)), uint16_t(0x3f80));  // tie, even below
        QCOMPARE(f32ToBf16(fromBits(0x3f818000)), uint16_t(0x3f82));  // tie, even above
        QCOMPARE(f32ToBf16(fromBits(0x7f7fffff)), uint16_t(0x7f80));  // FLT_MAX rounds to inf
        QCOMPARE(f32ToBf16(fromBits(0x00008000)), uint16_t(0x0000));  // subnormal tie -> 0
        QCOMPARE(f32ToBf16(fromBits(0x00018000)), uint16_t(0x0002));
    }

    // ggml_compute_fp32_to_bf16: NaN keeps sign and top payload, made quiet.
    void bf16NaN() {
        QCOMPARE(f32ToBf16(fromBits(0x7f800001)), uint16_t(0x7fc0));
        QCOMPARE(f32ToBf16(fromBits(0xff800001)), uint16_t(0xffc0));
        QCOMPARE(f32ToBf16(fromBits(0x7fc00000)), uint16_t(0x7fc0));
        QCOMPARE(f32ToBf16(fromBits(0x7fa50000)), uint16_t(0x7fe5));
        QCOMPARE(f32ToBf16(fromBits(0x7fffffff)), uint16_t(0x7fff));  // no rounding into the sign
        QCOMPARE(f32ToBf16(std::numeric_limits<float>::infinity()), uint16_t(0x7f80));
        QCOMPARE(f32ToBf16(-std::numeric_limits<float>::infinity()), uint16_t(0xff80));
    }
};

QTEST_APPLESS_MAIN(TestQuantHalf)
#include "test_quant_half.moc"
