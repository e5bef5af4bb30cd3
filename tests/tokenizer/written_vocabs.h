// Small vocabularies written by the tests themselves (no shared data needed).
#pragma once

#include "cairn/gguf.h"

#include <cstdio>
#include <string>
#include <vector>

namespace cairn::test {

// GPT-2's byte -> code point table, written out independently of the engine.
inline std::string byteLevel(unsigned char b) {
    uint32_t cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE))) {
        uint32_t n = 0;
        for (unsigned x = 0; x < b; ++x)
            if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE))) ++n;
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) s += char(cp);
    else {
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
    }
    return s;
}

// SentencePiece: <unk> <s> </s>, 256 byte tokens, then a few pieces.
inline std::vector<std::uint8_t> spmVocab() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.push_back(buf);
        types.push_back(6);
    }
    for (const char* p : {"\xE2\x96\x81", "a", "b",
                          "\xE2\x96\x81"
                          "a",
                          "ab",
                          "\xE2\x96\x81"
                          "ab"}) {
        tokens.push_back(p);
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size(), 0.f);
    for (size_t i = 259; i < tokens.size(); ++i) scores[i] = -float(i - 259);  // earlier pieces merge first
    gguf::Writer w;
    w.setString("general.architecture", "llama");
    w.setString("tokenizer.ggml.model", "llama");
    w.setStrings("tokenizer.ggml.tokens", tokens);
    w.setFloats("tokenizer.ggml.scores", scores);
    w.setInt32s("tokenizer.ggml.token_type", types);
    w.setUInt32("tokenizer.ggml.bos_token_id", 1);
    w.setUInt32("tokenizer.ggml.eos_token_id", 2);
    return w.toBytes();
}

// Byte-level BPE: 256 byte tokens (id = byte), "ab" and "bc", ChatML control tokens.
inline std::vector<std::uint8_t> bpeVocab(const std::vector<std::string>& merges) {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(byteLevel(uint8_t(b)));
        types.push_back(1);
    }
    for (const char* t : {"ab", "bc", "<|im_start|>", "<|im_end|>", "<|endoftext|>"}) {
        tokens.push_back(t);
        types.push_back(tokens.back()[0] == '<' ? 3 : 1);
    }
    gguf::Writer w;
    w.setString("general.architecture", "qwen2");
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", "qwen2");
    w.setStrings("tokenizer.ggml.tokens", tokens);
    w.setInt32s("tokenizer.ggml.token_type", types);
    w.setStrings("tokenizer.ggml.merges", merges);
    w.setUInt32("tokenizer.ggml.bos_token_id", 260);
    w.setUInt32("tokenizer.ggml.eos_token_id", 260);
    return w.toBytes();
}

// Ids in bpeVocab(): bytes are 0..255, then these.
constexpr int32_t kAb = 256, kBc = 257, kImStart = 258, kImEnd = 259, kEndOfText = 260;

}  // namespace cairn::test
