// Portable kernels: the canonical arithmetic of kernels_common.h written out
// plainly. Every SIMD path must give exactly these bits.
#include "tensor/kernels_common.h"

#include <cmath>

namespace cairn::tensor::kernels {

namespace {

void floatRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t n = w.cols;
    float* wr = reinterpret_cast<float*>(scratch(0, size_t(n) * 4));
    for (int64_t r = r0; r < r1; ++r) {
        decodeFloatRow(w.type, w.row(r), wr, n);  // once per row and call
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const float* x = a.x + t * a.ldx;
            float acc[16] = {};
            for (int64_t k = 0; k < n; ++k) acc[k & 15] = std::fma(wr[k], x[k], acc[k & 15]);
            y[t * ldy + r] = reduce16(acc);
        }
    }
}

void rows32(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const QuantInfo info = quantInfo(w.type);
    const int64_t nb = a.nBlocks;
    const size_t bb = traits(w.type).blockBytes;
    auto* dec = reinterpret_cast<Decoded32*>(scratch(0, size_t(nb) * sizeof(Decoded32)));
    for (int64_t r = r0; r < r1; ++r) {
        for (int64_t b = 0; b < nb; ++b) decodeBlock32(w.type, w.row(r) + b * bb, dec[b]);
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const int8_t* q = a.q + t * a.cols;
            const float* dx = a.d + t * nb;
            const int32_t* xoff = a.xoff + t * nb;
            const float* sx = a.sx + t * nb;
            float acc = 0.f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t isum = 0;
                for (int i = 0; i < 32; ++i) isum += int32_t(dec[b].u[i]) * q[b * 32 + i];
                isum -= xoff[b];
                acc = std::fma(float(isum), dec[b].d * dx[b], acc);
                if (info.hasMin) acc = std::fma(dec[b].m, sx[b], acc);
            }
            y[t * ldy + r] = acc;
        }
    }
}

void rowsK(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const QuantInfo info = quantInfo(w.type);
    const int64_t nb = a.nBlocks;
    const size_t bb = traits(w.type).blockBytes;
    auto* dec = reinterpret_cast<DecodedK*>(scratch(0, size_t(nb) * sizeof(DecodedK)));
    for (int64_t r = r0; r < r1; ++r) {
        for (int64_t b = 0; b < nb; ++b) decodeBlockK(w.type, w.row(r) + b * bb, dec[b]);
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const int8_t* q = a.q + t * a.cols;
            const int16_t* bsum = a.bsum + t * (a.cols / 16);
            const float* dx = a.d + t * nb;
            float acc = 0.f;
            for (int64_t b = 0; b < nb; ++b) {
                const DecodedK& k = dec[b];
                int32_t isum = 0, msum = 0;
                for (int j = 0; j < 16; ++j) {
                    int32_t dot = 0;
                    for (int i = 0; i < 16; ++i) dot += int32_t(k.u[16 * j + i]) * q[b * 256 + 16 * j + i];
                    const int32_t bs = bsum[b * 16 + j];
                    isum += k.s[j] * (dot - info.offset * bs);
                    msum += k.mn[j] * bs;
                }
                acc = std::fma(float(isum), k.d * dx[b], acc);
                if (info.hasMin) acc = std::fma(float(msum), -(k.dmin * dx[b]), acc);
            }
            y[t * ldy + r] = acc;
        }
    }
}

}  // namespace

void scalarRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    switch (quantInfo(w.type).blockSize) {
    case 0: floatRows(w, r0, r1, a, y, ldy); break;
    case 32: rows32(w, r0, r1, a, y, ldy); break;
    default: rowsK(w, r0, r1, a, y, ldy); break;
    }
}

const KernelSet& scalarKernels() {
    static const KernelSet set{"scalar", nullptr, nullptr, scalarRows, 1};
    return set;
}

}  // namespace cairn::tensor::kernels
