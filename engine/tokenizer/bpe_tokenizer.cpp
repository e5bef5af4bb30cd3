#include "bpe_tokenizer.h"

#include "byte_unicode.h"
#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/utf8.h"
#include "special_split.h"

#include <queue>

namespace cairn::tokenizer {
namespace {

struct Symbol {
    uint32_t start = 0, len = 0;
    int32_t prev = -1, next = -1;
};

struct Bigram {
    int32_t rank;
    int32_t left, right;
    uint32_t leftLen, rightLen;
    // Lowest rank first, then leftmost.
    bool operator<(const Bigram& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

// The bytes a vocabulary entry stands for, by its attributes (llama.cpp token_to_piece, BPE case).
std::string bpePiece(const Vocabulary& v, int32_t id) {
    const uint32_t attr = v.attrs[id];
    const std::string& text = v.texts[id];
    if (attr & (AttrControl | AttrUnknown)) return {};
    if (attr & AttrUserDefined) return text;
    if (attr & AttrNormal) return ByteUnicode::instance().decodeText(text);
    if (attr & AttrByte) {
        if (int b = byteTokenValue(text); b >= 0) return std::string(1, char(b));
        return ByteUnicode::instance().decodeText(text);
    }
    return {};
}

}  // namespace

BpeTokenizer::BpeTokenizer(std::shared_ptr<Vocabulary> vocab, const gguf::File& file)
    : Tokenizer(vocab), pre_(vocab->pre) {
    const gguf::Value* merges = file.find("tokenizer.ggml.merges");
    if (!merges) throw Error("tokenizer", "tokenizer.ggml.merges missing (needed by a gpt2 tokenizer)");
    if (!merges->isArray() || merges->elementType() != gguf::ValueType::String)
        throw Error("tokenizer", "tokenizer.ggml.merges is not an array of strings");
    auto lines = merges->strings();
    size_t total = 0;
    for (auto line : lines) total += line.size();
    mergeText_.reserve(total);
    for (auto line : lines) mergeText_.append(line);
    // Lines are looked up whole as "left right"; llama.cpp splits each at its first space
    // after the first byte, and byte-level symbols never contain a space, so this agrees.
    std::vector<std::string_view> keys;
    keys.reserve(lines.size());
    size_t at = 0;
    for (auto line : lines) {
        keys.emplace_back(mergeText_.data() + at, line.size());
        at += line.size();
    }
    ranks_.build(std::move(keys), false);
    vocab->pieces.resize(size_t(vocab->size()));
    for (int32_t id = 0; id < vocab->size(); ++id) vocab->pieces[size_t(id)] = bpePiece(*vocab, id);
}

int32_t BpeTokenizer::lookup(std::string_view text) const {
    int32_t id = vocab().find(text);
    if (id >= 0 && (vocab().attrs[id] & (AttrControl | AttrUnknown))) return -1;
    return id;
}

std::vector<int32_t> BpeTokenizer::encodeFragments(const std::vector<Fragment>& fragments, bool addSpecial) const {
    const Vocabulary& v = vocab();
    std::vector<int32_t> out;
    size_t bytes = 0;
    for (const Fragment& f : fragments) bytes += f.text.size();
    out.reserve(bytes / 3 + 4);
    if (addSpecial && v.addBos && v.bos >= 0) out.push_back(v.bos);
    for (const Fragment& f : fragments) {
        if (f.token >= 0) out.push_back(f.token);
        else encodeText(f.text, out);
    }
    if (addSpecial && v.addEos && v.eos >= 0) out.push_back(v.eos);
    return out;
}

void BpeTokenizer::encodeText(std::string_view text, std::vector<int32_t>& out) const {
    std::string cleaned;
    if (text::replaceInvalidUtf8(text, cleaned)) text = cleaned;
    const ByteUnicode& bytes = ByteUnicode::instance();
    std::string word;
    for (std::string_view raw : pre_.split(text)) {
        word.clear();
        for (char c : raw) word += bytes.encode(static_cast<uint8_t>(c));
        if (pre_.ignoreMerges()) {
            if (int32_t id = lookup(word); id >= 0) {
                out.push_back(id);
                continue;
            }
        }
        encodeWord(word, out);
    }
}

void BpeTokenizer::encodeWord(const std::string& word, std::vector<int32_t>& out) const {
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    for (size_t pos = 0; pos < word.size();) {
        size_t next = pos + 1;
        while (next < word.size() && (static_cast<unsigned char>(word[next]) & 0xC0) == 0x80) ++next;
        Symbol s;
        s.start = uint32_t(pos);
        s.len = uint32_t(next - pos);
        s.prev = int32_t(symbols.size()) - 1;
        s.next = next < word.size() ? int32_t(symbols.size()) + 1 : -1;
        symbols.push_back(s);
        pos = next;
    }

    std::priority_queue<Bigram> queue;
    std::string key;
    auto addBigram = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[size_t(left)];
        const Symbol& r = symbols[size_t(right)];
        key.assign(word, l.start, l.len);
        key += ' ';
        key.append(word, r.start, r.len);
        int32_t rank = ranks_.find(key);
        if (rank < 0) return;
        queue.push({rank, left, right, l.len, r.len});
    };
    for (int32_t i = 1; i < int32_t(symbols.size()); ++i) addBigram(i - 1, i);

    while (!queue.empty()) {
        Bigram b = queue.top();
        queue.pop();
        Symbol& l = symbols[size_t(b.left)];
        Symbol& r = symbols[size_t(b.right)];
        if (l.len != b.leftLen || r.len != b.rightLen || l.next != b.right) continue;  // outdated
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) symbols[size_t(r.next)].prev = b.left;
        addBigram(l.prev, b.left);
        addBigram(b.left, l.next);
    }

    for (int32_t i = 0; i >= 0 && i < int32_t(symbols.size()); i = symbols[size_t(i)].next) {
        const Symbol& s = symbols[size_t(i)];
        std::string_view text(word.data() + s.start, s.len);
        if (int32_t id = lookup(text); id >= 0) {
            out.push_back(id);
            continue;
        }
        // Not a token: fall back to single-byte entries, skipping bytes the vocabulary lacks.
        for (char c : text)
            if (int32_t id = lookup(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    }
}

}  // namespace cairn::tokenizer
