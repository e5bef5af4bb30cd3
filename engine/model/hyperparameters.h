// Checked reads of model hyperparameters. A GGUF file is untrusted: a value the
// forward pass divides by or takes a log or power of must be finite and in range
// (a NaN epsilon or a rope base of 1 gives NaN logits, not an error), and the
// integers that size tables and buffers are bounded so their products cannot
// overflow. Each failure is a cairn::Error naming the key and the value.
#pragma once

#include "cairn/gguf.h"
#include "model/rope.h"

#include <cstdint>
#include <span>
#include <string>

namespace cairn::model {

// A number (`fallback` when absent) that must be finite and greater than `above`.
double floatAbove(const gguf::File& f, const std::string& key, double fallback, double above);
// A number (`fallback` when absent) that must be finite.
double finiteFloat(const gguf::File& f, const std::string& key, double fallback);

// A norm epsilon (`fallback` when absent): finite and positive also as a float.
float normEpsilon(const gguf::File& f, const std::string& key, double fallback = 1e-5);

// An integer that must be present (or is `fallback` when absent) and lie in [min, max].
int64_t intInRange(const gguf::File& f, const std::string& key, int64_t min, int64_t max);
int64_t intInRange(const gguf::File& f, const std::string& key, int64_t fallback, int64_t min, int64_t max);

// RoPE scaling from `prefix` rope.scaling.* (or the older rope.scale_linear):
// none, linear or YaRN with its parameters, into r (freq_base and dims are the
// caller's). Throws naming the key for a negative factor or an unknown type.
void readRopeScaling(const gguf::File& f, const std::string& prefix, int64_t trainedContext, RopeConfig& r);

// Every value of `tensor` (already read as floats) must be finite and positive (divisors such as rope_freqs).
void requirePositiveFinite(std::span<const float> values, const std::string& tensor);

// Bounds shared by the architectures: far above any real model, low enough that
// products of a few of them fit in 64 bits.
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxEmbedding = int64_t(1) << 20;
constexpr int64_t kMaxFeedForward = int64_t(1) << 22;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxHeadSize = 4096;
constexpr int64_t kMaxContext = int64_t(1) << 30;

}  // namespace cairn::model
