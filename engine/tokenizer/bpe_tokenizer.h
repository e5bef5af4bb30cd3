// Byte-level BPE (`tokenizer.ggml.model` = gpt2): special-token split, regex
// pre-tokenizer, GPT-2 byte encoding, then merges by rank (lowest rank first,
// leftmost on ties), as llama.cpp's llm_tokenizer_bpe_session.
#pragma once

#include "cairn/tokenizer.h"
#include "pretokenizer.h"
#include "special_split.h"
#include "string_index.h"
#include "vocabulary.h"

#include <string>

namespace cairn::tokenizer {

class BpeTokenizer final : public Tokenizer {
public:
    BpeTokenizer(std::shared_ptr<Vocabulary> vocab, const gguf::File& file);

protected:
    std::vector<int32_t> encodeFragments(const std::vector<Fragment>& fragments, bool addSpecial) const override;

private:
    void encodeText(std::string_view text, std::vector<int32_t>& out) const;
    void encodeWord(const std::string& word, std::vector<int32_t>& out) const;
    int32_t lookup(std::string_view text) const;  // a token that plain text may produce, or -1

    PreTokenizer pre_;
    std::string mergeText_;  // every merge line, concatenated
    StringIndex ranks_;  // "left right" -> merge rank (the first of duplicates)
};

}  // namespace cairn::tokenizer
