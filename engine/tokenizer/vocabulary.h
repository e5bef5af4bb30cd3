// The vocabulary of a tokenizer as read from GGUF metadata: token strings,
// scores, attributes, special ids and flags. Shared by the SPM and BPE tokenizers.
#pragma once

#include "string_index.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace cairn::gguf {
class File;
}

namespace cairn::tokenizer {

// Token attributes as bit flags (llama.cpp's llama_token_attr): a token read as
// USER_DEFINED may also be marked CONTROL when its text says it ends generation.
enum Attr : uint32_t {
    AttrUndefined = 0,
    AttrUnknown = 1u << 0,
    AttrUnused = 1u << 1,
    AttrNormal = 1u << 2,
    AttrControl = 1u << 3,
    AttrUserDefined = 1u << 4,
    AttrByte = 1u << 5,
    AttrLStrip = 1u << 7,
    AttrRStrip = 1u << 8,
};

enum class Kind { Spm, Bpe };

// The byte a byte token's text names: exactly "<0x" two hex digits ">", else -1
// (a vocabulary is untrusted: "<0xZZ>", "<0x>", "<0x-1>" name no byte).
int byteTokenValue(std::string_view text);

struct Vocabulary {
    Vocabulary() = default;
    Vocabulary(const Vocabulary&) = delete;
    Vocabulary& operator=(const Vocabulary&) = delete;

    Kind kind = Kind::Spm;
    std::string pre;  // pre-tokenizer name (BPE: "gpt-2" when absent)
    std::vector<std::string> texts;  // raw vocabulary strings
    std::vector<float> scores;
    std::vector<int32_t> types;  // GGUF token types as stored (1 normal ... 6 byte)
    std::vector<uint32_t> attrs;  // Attr flags
    std::vector<std::string> pieces;  // tokenBytes() of every token, built once
    StringIndex byText;  // text -> id (a later duplicate wins, as in llama.cpp)

    int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1;
    bool addBos = false, addEos = false;
    bool addSpacePrefix = false;  // SPM: a space before every text fragment after a special token
    std::unordered_set<int32_t> eog;

    // Tokens split out of the text before tokenizing (control, user-defined,
    // unknown), longest text first; llama.cpp's cache_special_tokens.
    std::vector<int32_t> specials;

    int32_t size() const { return int32_t(texts.size()); }
    bool valid(int32_t id) const { return id >= 0 && id < size(); }
    void checkId(int32_t id) const;  // throws cairn::Error when out of range
    int32_t find(std::string_view text) const { return byText.find(text); }

    // Reads everything except `pieces` (the tokenizer fills them, as it knows how
    // tokens decode). Fill in place: `byText` points into `texts`, so never copy a Vocabulary.
    void load(const gguf::File& file);
};

}  // namespace cairn::tokenizer
