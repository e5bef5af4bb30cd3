// Tokenizer: the vocabulary-level queries shared by both kinds, and the factory.
#include "cairn/tokenizer.h"

#include "bpe_tokenizer.h"
#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/utf8.h"
#include "special_split.h"
#include "spm_tokenizer.h"

namespace cairn {

using tokenizer::Vocabulary;

std::unique_ptr<Tokenizer> Tokenizer::fromGguf(const gguf::File& file) {
    auto vocab = std::make_shared<Vocabulary>();
    vocab->load(file);
    if (vocab->kind == tokenizer::Kind::Spm) return std::make_unique<tokenizer::SpmTokenizer>(vocab);
    return std::make_unique<tokenizer::BpeTokenizer>(vocab, file);
}

Tokenizer::Tokenizer(std::shared_ptr<const Vocabulary> vocab) : vocab_(std::move(vocab)) {}
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    return encodeFragments(tokenizer::splitSpecial(*vocab_, text, parseSpecial), addSpecial);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addSpecial,
                                       std::span<const TextSpan> plainSpans) const {
    return encodeFragments(tokenizer::splitSpecial(*vocab_, text, true, plainSpans), addSpecial);
}

std::vector<Tokenizer::SpecialAt> Tokenizer::parsedSpecials(std::string_view text,
                                                            std::span<const TextSpan> plainSpans) const {
    std::vector<SpecialAt> found;
    for (const auto& f : tokenizer::splitSpecial(*vocab_, text, true, plainSpans)) {
        if (f.token < 0 || !(vocab_->attrs[size_t(f.token)] & (tokenizer::AttrControl | tokenizer::AttrUnknown)))
            continue;
        const size_t at = size_t(f.text.data() - text.data());
        found.push_back({f.token, {at, at + f.text.size()}});
    }
    return found;
}

std::string Tokenizer::tokenBytes(int32_t id) const {
    vocab_->checkId(id);
    return vocab_->pieces[size_t(id)];
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
        vocab_->checkId(ids[i]);
        const std::string& piece = vocab_->pieces[size_t(ids[i])];
        // llama.cpp (detokenize) strips the space SPM put in front of the text, from the first token only.
        if (i == 0 && vocab_->addSpacePrefix && !piece.empty() && piece[0] == ' ') out.append(piece, 1);
        else out += piece;
    }
    return out;
}

std::string_view Tokenizer::tokenText(int32_t id) const {
    vocab_->checkId(id);
    return vocab_->texts[size_t(id)];
}

int32_t Tokenizer::findToken(std::string_view text) const { return vocab_->find(text); }
int32_t Tokenizer::vocabSize() const { return vocab_->size(); }
int32_t Tokenizer::bos() const { return vocab_->bos; }
int32_t Tokenizer::eos() const { return vocab_->eos; }
int32_t Tokenizer::eot() const { return vocab_->eot; }
bool Tokenizer::addBos() const { return vocab_->addBos; }
bool Tokenizer::addEos() const { return vocab_->addEos; }

bool Tokenizer::isControl(int32_t id) const {
    return vocab_->valid(id) && (vocab_->attrs[size_t(id)] & tokenizer::AttrControl);
}

bool Tokenizer::isEndOfGeneration(int32_t id) const { return vocab_->eog.count(id) > 0; }

std::string Tokenizer::kind() const { return vocab_->kind == tokenizer::Kind::Spm ? "spm" : "bpe"; }
std::string Tokenizer::preTokenizer() const { return vocab_->pre; }

std::string StreamDecoder::push(int32_t id) {
    pending_ += tokenizer_.tokenBytes(id);
    size_t n = text::utf8SafePrefix(pending_);
    std::string out = pending_.substr(0, n);
    pending_.erase(0, n);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    out.swap(pending_);
    return out;
}

}  // namespace cairn
