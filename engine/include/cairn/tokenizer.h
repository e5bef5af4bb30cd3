// Tokenizers built from a GGUF file's `tokenizer.ggml.*` metadata:
// SentencePiece (`llama`) through the sentencepiece library, byte-level BPE
// (`gpt2`) with the pre-tokenizer named by `tokenizer.ggml.pre`.
//
// Behaviour follows llama.cpp's `llama_tokenize` / `llama_token_to_piece`:
// control-token text is split out only when asked (parseSpecial), user-defined
// tokens always are, and SPM prepends a space to every text fragment that starts
// the call or follows a special token.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

namespace gguf {
class File;
}
namespace tokenizer {
struct Vocabulary;
struct Fragment;
}  // namespace tokenizer

// A byte range [begin, end) of a text.
struct TextSpan {
    size_t begin = 0;
    size_t end = 0;
    bool operator==(const TextSpan&) const = default;
};

class Tokenizer {
public:
    // Reads the vocabulary (strings are copied: the Tokenizer may outlive `file`).
    // Throws cairn::Error for missing or malformed metadata and unsupported kinds.
    static std::unique_ptr<Tokenizer> fromGguf(const gguf::File& file);
    virtual ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // addSpecial: add BOS/EOS as the vocabulary's flags say; parseSpecial: control-token text becomes control tokens.
    std::vector<int32_t> encode(std::string_view text, bool addSpecial, bool parseSpecial) const;
    // Control-token text becomes control tokens except where it overlaps one of `plainSpans`
    // (sorted, disjoint byte ranges of `text`): there it is plain text. Everything else is as
    // encode(text, addSpecial, true), merges across span edges included (chat prompts: the
    // template's text is parsed, message content is not).
    std::vector<int32_t> encode(std::string_view text, bool addSpecial, std::span<const TextSpan> plainSpans) const;
    // The control and unknown tokens encode(text, false, plainSpans) parses, in order, with
    // the ranges of their text (empty plainSpans: those of encode(text, false, true)).
    struct SpecialAt {
        int32_t id;
        TextSpan text;
    };
    std::vector<SpecialAt> parsedSpecials(std::string_view text, std::span<const TextSpan> plainSpans = {}) const;

    // The bytes this token stands for (byte tokens, ▁ and Ġ decoded to spaces);
    // control, unknown and unused tokens give "". Throws cairn::Error for an id out of range.
    std::string tokenBytes(int32_t id) const;
    // Concatenated bytes. SPM drops one leading space of the first token, as llama.cpp does.
    std::string decode(std::span<const int32_t> ids) const;
    // The raw vocabulary string.
    std::string_view tokenText(int32_t id) const;
    // The id whose vocabulary string is exactly `text`, or -1.
    int32_t findToken(std::string_view text) const;

    int32_t vocabSize() const;
    int32_t bos() const;  // -1 when absent
    int32_t eos() const;
    int32_t eot() const;
    bool addBos() const;
    bool addEos() const;
    bool isControl(int32_t id) const;
    bool isEndOfGeneration(
        int32_t id) const;  // eos, eot, eom, <|im_end|>, <|eot_id|>, <|endoftext|> ... (llama.cpp's EOG set)
    std::string kind() const;  // "spm" or "bpe"
    std::string preTokenizer() const;  // `tokenizer.ggml.pre` as applied ("default" when absent)

protected:
    explicit Tokenizer(std::shared_ptr<const tokenizer::Vocabulary> vocab);
    const tokenizer::Vocabulary& vocab() const { return *vocab_; }
    // The ids of text already split into special tokens and plain fragments.
    virtual std::vector<int32_t> encodeFragments(const std::vector<tokenizer::Fragment>& fragments,
                                                 bool addSpecial) const = 0;

private:
    std::shared_ptr<const tokenizer::Vocabulary> vocab_;
};

// Streams token bytes out without ever splitting a UTF-8 character: bytes of an
// incomplete character are held until the character is complete (or flush()).
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
    std::string push(int32_t id);
    std::string flush();  // whatever is held back, possibly an incomplete character

private:
    const Tokenizer& tokenizer_;
    std::string pending_;
};

}  // namespace cairn
