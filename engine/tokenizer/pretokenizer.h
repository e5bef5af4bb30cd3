// Regex pre-tokenizers of byte-level BPE vocabularies, chosen by `tokenizer.ggml.pre`
// (the regex lists of llama.cpp's llm_tokenizer_bpe), run with PCRE2 (UTF, UCP, JIT).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tokenizer {

class PreTokenizer {
public:
    // Throws cairn::Error for a name we do not know.
    explicit PreTokenizer(const std::string& name);
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    // Words of `text` (well-formed UTF-8). Each regex in turn splits every current
    // word into its matches and the gaps between them.
    std::vector<std::string_view> split(std::string_view text) const;

    // Whether a word that is itself a vocabulary token skips the merges (llama3 family).
    bool ignoreMerges() const { return ignoreMerges_; }
    // Whether `name` is a pre-tokenizer this class knows.
    static bool known(const std::string& name);

private:
    struct Regex;
    std::vector<std::unique_ptr<Regex>> regexes_;
    bool ignoreMerges_ = false;
};

}  // namespace cairn::tokenizer
