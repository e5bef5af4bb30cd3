// Tiny random llama / qwen2 / qwen3 models written with our gguf::Writer, for
// unit tests that need a real Model without the shared fixtures. They carry a
// small byte-level BPE vocabulary (256 byte tokens + a few control tokens), so
// Model::load attaches a working tokenizer.
#pragma once

#include "cairn/gguf.h"
#include "cairn/tensor_type.h"

#include <cstdint>
#include <string>

namespace cairn::test {

enum class TinyArch { Llama, Qwen2, Qwen3 };

struct TinyModelOptions {
    TinyArch arch = TinyArch::Llama;
    TensorType type = TensorType::F32;  // 2-D weights: F32, F16, Q8_0, Q4_0 (rows of 64 / 128)
    uint32_t seed = 1;
    int64_t layers = 2;
    bool tied = true;  // no output.weight
    bool ropeFreqs = false;  // llama: Llama-3.1 style rope_freqs tensor
    bool yarn = false;  // YaRN ×4 rope scaling metadata
    int64_t context = 256;
    std::string archName;  // written as general.architecture (and key prefix) instead of arch's own name
};

// Token ids of the tiny vocabulary: bytes are 0…255 (GPT-2 byte order), then these.
constexpr int32_t kTinyEndOfText = 256;  // <|endoftext|>, bos/eos
constexpr int32_t kTinyImStart = 257;  // <|im_start|>
constexpr int32_t kTinyImEnd = 258;  // <|im_end|>
constexpr int64_t kTinyVocab = 260;

gguf::Writer tinyModelWriter(const TinyModelOptions& options);
// Writes the model to `path` and returns it.
std::string writeTinyModel(const std::string& path, const TinyModelOptions& options);
// Adds the tiny byte-level BPE vocabulary's tokenizer.* metadata.
void addTinyVocabulary(gguf::Writer& w);

}  // namespace cairn::test
