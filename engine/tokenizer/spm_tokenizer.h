// SentencePiece vocabularies (`tokenizer.ggml.model` = llama): a sentencepiece
// BPE ModelProto is built from the GGUF tokens, scores and types and loaded with
// the sentencepiece library; llama.cpp's handling of special tokens and of the
// space prefix is done around it.
#pragma once

#include "cairn/tokenizer.h"
#include "special_split.h"
#include "vocabulary.h"

#include <memory>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace cairn::tokenizer {

class SpmTokenizer final : public Tokenizer {
public:
    explicit SpmTokenizer(std::shared_ptr<Vocabulary> vocab);
    ~SpmTokenizer() override;

protected:
    std::vector<int32_t> encodeFragments(const std::vector<Fragment>& fragments, bool addSpecial) const override;

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace cairn::tokenizer
