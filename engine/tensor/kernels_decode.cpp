// Scalar block decoders into the unsigned-code form of kernels_common.h, the
// per-type offsets, and the thread-local scratch buffers. Baseline ISA only.
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/quant.h"

#include <cstdlib>
#include <cstring>
#include <memory>

namespace cairn::tensor::kernels {

QuantInfo quantInfo(TensorType type) {
    switch (type) {
    case TensorType::Q4_0: return {32, 8, false};
    case TensorType::Q4_1: return {32, 0, true};
    case TensorType::Q5_0: return {32, 16, false};
    case TensorType::Q5_1: return {32, 0, true};
    case TensorType::Q8_0: return {32, 128, false};  // u = q + 128
    case TensorType::Q2_K: return {256, 0, true};
    case TensorType::Q3_K: return {256, 4, false};
    case TensorType::Q4_K: return {256, 0, true};
    case TensorType::Q5_K: return {256, 0, true};
    case TensorType::Q6_K: return {256, 32, false};
    default: return {0, 0, false};
    }
}

namespace {

uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// The 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block.
void scaleMinK4(int j, const uint8_t* q, int& sc, int& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

}  // namespace

void decodeBlock32(TensorType type, const uint8_t* block, Decoded32& out) {
    out.m = 0.f;
    switch (type) {
    case TensorType::Q4_0: {
        const auto* b = reinterpret_cast<const BlockQ4_0*>(block);
        out.d = f16ToF32(b->d);
        for (int i = 0; i < 16; ++i) {
            out.u[i] = b->qs[i] & 0xF;
            out.u[i + 16] = b->qs[i] >> 4;
        }
        break;
    }
    case TensorType::Q4_1: {
        const auto* b = reinterpret_cast<const BlockQ4_1*>(block);
        out.d = f16ToF32(b->d);
        out.m = f16ToF32(b->m);
        for (int i = 0; i < 16; ++i) {
            out.u[i] = b->qs[i] & 0xF;
            out.u[i + 16] = b->qs[i] >> 4;
        }
        break;
    }
    case TensorType::Q5_0:
    case TensorType::Q5_1: {
        const uint8_t* qs;
        uint32_t qh;
        if (type == TensorType::Q5_0) {
            const auto* b = reinterpret_cast<const BlockQ5_0*>(block);
            out.d = f16ToF32(b->d);
            qh = load32(b->qh);
            qs = b->qs;
        } else {
            const auto* b = reinterpret_cast<const BlockQ5_1*>(block);
            out.d = f16ToF32(b->d);
            out.m = f16ToF32(b->m);
            qh = load32(b->qh);
            qs = b->qs;
        }
        for (int i = 0; i < 16; ++i) {
            out.u[i] = uint8_t((qs[i] & 0xF) | (((qh >> i) & 1) << 4));
            out.u[i + 16] = uint8_t((qs[i] >> 4) | (((qh >> (i + 16)) & 1) << 4));
        }
        break;
    }
    case TensorType::Q8_0: {
        const auto* b = reinterpret_cast<const BlockQ8_0*>(block);
        out.d = f16ToF32(b->d);
        for (int i = 0; i < 32; ++i) out.u[i] = uint8_t(int(b->qs[i]) + 128);
        break;
    }
    default: break;
    }
}

void decodeBlockK(TensorType type, const uint8_t* block, DecodedK& out) {
    std::memset(out.mn, 0, sizeof out.mn);
    out.dmin = 0.f;
    switch (type) {
    case TensorType::Q2_K: {
        const auto* b = reinterpret_cast<const BlockQ2_K*>(block);
        out.d = f16ToF32(b->d);
        out.dmin = f16ToF32(b->dmin);
        for (int j = 0; j < 16; ++j) {
            out.s[j] = b->scales[j] & 0xF;
            out.mn[j] = b->scales[j] >> 4;
        }
        for (int n = 0; n < 2; ++n)
            for (int j = 0; j < 4; ++j)
                for (int h = 0; h < 2; ++h)
                    for (int l = 0; l < 16; ++l)
                        out.u[n * 128 + j * 32 + h * 16 + l] = (b->qs[n * 32 + h * 16 + l] >> (2 * j)) & 3;
        break;
    }
    case TensorType::Q3_K: {
        const auto* b = reinterpret_cast<const BlockQ3_K*>(block);
        out.d = f16ToF32(b->d);
        uint32_t aux[4];
        std::memcpy(aux, b->scales, 12);
        const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = aux[2];
        aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
        aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
        aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
        aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
        const auto* sc = reinterpret_cast<const int8_t*>(aux);
        for (int j = 0; j < 16; ++j) out.s[j] = int16_t(sc[j] - 32);
        int bit = 0;
        for (int n = 0; n < 2; ++n)
            for (int j = 0; j < 4; ++j, ++bit)
                for (int h = 0; h < 2; ++h)
                    for (int l = 0; l < 16; ++l) {
                        int low = (b->qs[n * 32 + h * 16 + l] >> (2 * j)) & 3;
                        int high = (b->hmask[h * 16 + l] >> bit) & 1;
                        out.u[n * 128 + j * 32 + h * 16 + l] = uint8_t(low + 4 * high);
                    }
        break;
    }
    case TensorType::Q4_K:
    case TensorType::Q5_K: {
        const uint8_t* scales;
        const uint8_t* qs;
        const uint8_t* qh = nullptr;
        if (type == TensorType::Q4_K) {
            const auto* b = reinterpret_cast<const BlockQ4_K*>(block);
            out.d = f16ToF32(b->d);
            out.dmin = f16ToF32(b->dmin);
            scales = b->scales;
            qs = b->qs;
        } else {
            const auto* b = reinterpret_cast<const BlockQ5_K*>(block);
            out.d = f16ToF32(b->d);
            out.dmin = f16ToF32(b->dmin);
            scales = b->scales;
            qs = b->qs;
            qh = b->qh;
        }
        for (int j = 0; j < 8; ++j) {
            int sc, m;
            scaleMinK4(j, scales, sc, m);
            out.s[2 * j] = out.s[2 * j + 1] = int16_t(sc);
            out.mn[2 * j] = out.mn[2 * j + 1] = int16_t(m);
        }
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) {
                int lo = qs[32 * c + l] & 0xF, hi = qs[32 * c + l] >> 4;
                if (qh) {
                    lo |= ((qh[l] >> (2 * c)) & 1) << 4;
                    hi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
                }
                out.u[64 * c + l] = uint8_t(lo);
                out.u[64 * c + 32 + l] = uint8_t(hi);
            }
        break;
    }
    case TensorType::Q6_K: {
        const auto* b = reinterpret_cast<const BlockQ6_K*>(block);
        out.d = f16ToF32(b->d);
        for (int j = 0; j < 16; ++j) out.s[j] = b->scales[j];
        for (int n = 0; n < 2; ++n) {
            const uint8_t* ql = b->ql + 64 * n;
            const uint8_t* qh = b->qh + 32 * n;
            uint8_t* u = out.u + 128 * n;
            for (int l = 0; l < 32; ++l) {
                u[l] = uint8_t((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
                u[l + 32] = uint8_t((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
                u[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                u[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
            }
        }
        break;
    }
    default: break;
    }
}

void decodeFloatRow(TensorType type, const uint8_t* row, float* out, int64_t n) {
    switch (type) {
    case TensorType::F32: std::memcpy(out, row, size_t(n) * 4); break;
    case TensorType::F16:
        for (int64_t i = 0; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, row + 2 * i, 2);
            out[i] = f16ToF32(h);
        }
        break;
    case TensorType::BF16:
        for (int64_t i = 0; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, row + 2 * i, 2);
            out[i] = bf16ToF32(h);
        }
        break;
    default: break;
    }
}

namespace {
struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
};
struct ScratchSlot {
    std::unique_ptr<uint8_t, FreeDeleter> p;
    size_t size = 0;
};
constexpr int kSlots = kWorkerActivationsSlot + 1;
thread_local ScratchSlot tlsSlots[kSlots];
}  // namespace

uint8_t* scratch(int slot, size_t bytes) {
    ScratchSlot& s = tlsSlots[slot];
    if (s.size < bytes) {
        size_t size = (bytes + 4095) & ~size_t(4095);
        s.p.reset(static_cast<uint8_t*>(std::aligned_alloc(64, size)));
        if (!s.p) throw std::bad_alloc();
        s.size = size;
    }
    return s.p.get();
}

}  // namespace cairn::tensor::kernels
