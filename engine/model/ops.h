// Shared per-position operations of the forward passes (every architecture).
//
// Exactness: every function here computes each output row from its own input
// row only, with a fixed summation order, so a position gives the same bits
// whether it is computed alone or inside a chunk, on any thread.
#pragma once

#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "tensor/matmul.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace cairn::model {

// y = x / sqrt(mean(x²) + eps) · w  over one row of n values (w may be null: no scale).
void rmsNorm(const float* x, const float* w, float* y, int64_t n, float eps);

// rmsNorm on `rows` rows, `ld` floats apart (in place allowed: x == y).
void rmsNormRows(const float* x, const float* w, float* y, int64_t n, int64_t rows, int64_t ld, float eps);

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

// out[i] = silu(gate[i]) · up[i] with the vector exp of model/vector_math.h
// (a few ulp from std::exp); in place allowed: out == gate or out == up.
void swiglu(const float* gate, const float* up, float* out, int64_t n);

// GELU, tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
float geluTanh(float x);

// out[i] = geluTanh(gate[i]) · up[i]   (Gemma's GeGLU; in place allowed).
void geglu(const float* gate, const float* up, float* out, int64_t n);

// y[i] += x[i]
void addInPlace(float* y, const float* x, int64_t n);

// Fixed-order dot product of two f32 vectors (8 partial sums, then combined in order).
float dot(const float* a, const float* b, int64_t n);

// Runs fn(t) for the chunk's positions t in [first, T) (every position:
// first = 0), split over the threads.
void forEachPosition(int64_t first, int64_t T, ExecContext& ctx, const std::function<void(int64_t)>& fn);
inline void forEachPosition(int64_t T, ExecContext& ctx, const std::function<void(int64_t)>& fn) {
    forEachPosition(0, T, ctx, fn);
}

// The first of a chunk's T positions whose outputs layer `layer` (of
// `layers`) must compute. The last layer's outputs feed only the logits, so
// unless every position's are wanted (allLogits) its queries, attention
// output, feed-forward and the like run on the last position alone, or on
// none without logits (wantLogits false); every position still writes its
// keys and values or recurrent state. llama.cpp's graphs do the same (their
// inp_out_ids). A position's outputs are computed as they would be in the
// whole chunk (batched ≡ sequential), so the logits keep their bits.
inline int64_t firstOutputPosition(int64_t layer, int64_t layers, int64_t T, bool allLogits, bool wantLogits) {
    if (layer + 1 < layers || allLogits) return 0;
    return wantLogits ? T - 1 : T;
}

// Rows of the embedding table `table` (n_vocab rows of n_embd, any row
// layout) for `tokens`, as f32, `ld` floats apart. Throws cairn::Error for an
// id outside the vocabulary.
void embedTokens(const tensor::MatrixView& table, std::span<const int32_t> tokens, float* out, int64_t ld);

// A 2-D weight of the mapping as a matmul operand (a view, nothing copied).
// Throws cairn::Error when it is not 2-D or its type cannot be computed with.
tensor::MatrixView matrixView(const gguf::TensorInfo& t);

// Output rows [first, first + n) of a weight, still a view: the parts of a
// fused projection (phi3's attn_qkv and gate+up ffn_up). Every output row is
// computed on its own, so a part gives the bits of a separate weight.
tensor::MatrixView rowSlice(const tensor::MatrixView& w, int64_t first, int64_t n);

// A small 1-D tensor (norm weight, bias) as f32 values, checked to have `n` elements.
std::vector<float> vectorF32(const gguf::TensorInfo& t, int64_t n);

// Loading helpers shared by every architecture: an integer metadata value that
// must be present, and a 2-D tensor shape check; both throw cairn::Error.
int64_t requiredInt(const gguf::File& f, const std::string& key);
void checkShape(const gguf::TensorInfo& t, int64_t ne0, int64_t ne1);

}  // namespace cairn::model
