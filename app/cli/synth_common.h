// Helpers shared by the `cairn-cli synth` writers: deterministic random
// numbers, the weight type llama-quantize falls back to, the vocabulary copy.
#pragma once

#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/tensor_type.h"
#include "tensor/quant.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace cairn::cli {

// Deterministic normal numbers from a per-row seed (splitmix64 + Box–Muller).
struct Rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    void normals(float* out, int64_t n, float stddev) {
        for (int64_t i = 0; i < n; i += 2) {
            const double u1 = (double(next() >> 11) + 1.0) * 0x1.0p-53, u2 = double(next() >> 11) * 0x1.0p-53;
            const double r = std::sqrt(-2.0 * std::log(u1)) * stddev;
            out[i] = float(r * std::cos(2 * M_PI * u2));
            if (i + 1 < n) out[i + 1] = float(r * std::sin(2 * M_PI * u2));
        }
    }
};

// The type a weight of `cols` columns gets; K formats fall back like llama-quantize
// when the rows do not fill whole super-blocks.
inline TensorType fitType(TensorType t, int64_t cols) {
    if (cols % traits(t).blockSize == 0) return t;
    switch (t) {
    case TensorType::Q4_K: return TensorType::Q5_0;
    case TensorType::Q6_K: return TensorType::Q8_0;
    default: return TensorType::F16;
    }
}

inline void copyVocabulary(gguf::Writer& w, const std::string& vocabPath) {
    const auto vocab = gguf::File::open(vocabPath);
    for (const auto& v : vocab.metadata())
        if (v.key().substr(0, 10) == "tokenizer.") w.copyValue(v);
}

// The keys every attention preset writes first: architecture, name, and the
// geometry shared by transformers and hybrids.
struct CommonGeometry {
    const char* arch;
    const char* name;
    int64_t layers, context, embedding, feedForward, heads;
};
inline void setCommonMetadata(gguf::Writer& w, const CommonGeometry& g, TensorType type) {
    const std::string a = std::string(g.arch) + ".";
    w.setString("general.architecture", g.arch);
    w.setString("general.name", std::string("cairn-synth-") + g.name + "-" + std::string(tensorTypeName(type)));
    w.setUInt32("general.quantization_version", 2);
    w.setUInt32(a + "block_count", uint32_t(g.layers));
    w.setUInt32(a + "context_length", uint32_t(g.context));
    w.setUInt32(a + "embedding_length", uint32_t(g.embedding));
    w.setUInt32(a + "feed_forward_length", uint32_t(g.feedForward));
    w.setUInt32(a + "attention.head_count", uint32_t(g.heads));
}

// A `rows` × `cols` matrix of N(0, stddev) values in type t, row r drawn from
// seed + r (so rows are filled in parallel, the same whatever the threads), at write time.
inline void addRandomMatrix(gguf::Writer& w, ExecContext& ctx, const std::string& name, TensorType t, int64_t cols,
                            int64_t rows, float stddev, uint64_t seed) {
    const size_t rb = rowBytes(t, cols);
    w.addTensor(name, t, {cols, rows}, [=, &ctx](std::span<uint8_t> out) {
        ctx.parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r = r0; r < r1; ++r) {
                Rng rng{seed + uint64_t(r) * 0x9E3779B97F4A7C15ull};
                rng.normals(row.data(), cols, stddev);
                uint8_t* dst = out.data() + size_t(r) * rb;
                if (t == TensorType::F32) std::memcpy(dst, row.data(), rb);
                else tensor::quantizeRow(t, row.data(), dst, cols);
            }
        });
    });
}

}  // namespace cairn::cli
