#include "spm_tokenizer.h"

#include "cairn/error.h"
#include "proto_writer.h"
#include "special_split.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <unordered_set>

namespace cairn::tokenizer {
namespace {

constexpr const char* kWhere = "tokenizer";

// sentencepiece's ModelProto.SentencePiece.Type
enum PieceType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

std::string spmPiece(const Vocabulary& v, int32_t id) {
    const uint32_t attr = v.attrs[id];
    const std::string& text = v.texts[id];
    if (attr & (AttrControl | AttrUnknown)) return {};
    if (attr & AttrUserDefined) return text;
    if (attr & AttrNormal) {
        std::string out;
        out.reserve(text.size());
        for (size_t i = 0; i < text.size(); ++i) {
            if (text.compare(i, 3, "\xE2\x96\x81") == 0) {  // U+2581 stands for a space
                out += ' ';
                i += 2;
            } else {
                out += text[i];
            }
        }
        return out;
    }
    if (attr & AttrByte) {
        int b = byteTokenValue(text);
        return b >= 0 ? std::string(1, char(b)) : std::string();
    }
    return {};
}

// Serializes the vocabulary as a sentencepiece ModelProto (BPE model, identity
// normalizer, no dummy prefix: llama.cpp adds the prefix space itself).
std::string buildModelProto(const Vocabulary& v) {
    // Byte fallback needs all 256 byte pieces; sentencepiece refuses a partial set.
    std::vector<int32_t> byteIds(256, -1);
    for (int32_t id = 0; id < v.size(); ++id)
        if (v.types[id] == 6)
            if (int b = byteTokenValue(v.texts[id]); b >= 0 && byteIds[b] < 0) byteIds[b] = id;
    bool byteFallback = std::find(byteIds.begin(), byteIds.end(), -1) == byteIds.end();

    int32_t unk = v.unk >= 0 && v.types[v.unk] == 2 ? v.unk : -1;
    for (int32_t id = 0; unk < 0 && id < v.size(); ++id)
        if (v.types[id] == 2) unk = id;
    if (unk < 0) unk = v.unk;  // no token typed unknown (e.g. no token_type array): the unknown id
    if (unk < 0) throw Error(kWhere, "SentencePiece vocabulary without an unknown token");

    ProtoWriter model;
    model.reserve(size_t(v.size()) * 24);
    std::unordered_set<std::string_view> seen;
    seen.reserve(size_t(v.size()));
    ProtoWriter piece;
    for (int32_t id = 0; id < v.size(); ++id) {
        const std::string& text = v.texts[id];
        const uint32_t attr = v.attrs[id];
        int type = Normal;
        if (id == unk) type = Unknown;
        else if (attr & (AttrControl | AttrUnknown)) type = Control;  // never produced from text
        else if (attr & AttrUserDefined) type = UserDefined;
        else if (attr & AttrUnused) type = Unused;
        else if (v.types[id] == 6) {
            // A malformed byte token ("<0xZZ>") names no byte: inert, never an index.
            const int b = byteTokenValue(text);
            type = byteFallback && b >= 0 && byteIds[size_t(b)] == id ? Byte : Control;
        } else if (!(attr & AttrNormal)) type = Control;
        // sentencepiece rejects empty and duplicate pieces: give those an inert name.
        std::string name = text;
        if (name.empty() || !seen.insert(text).second) {
            name = "<cairn-inert-" + std::to_string(id) + ">";
            type = id == unk ? Unknown : Control;
        }
        piece = ProtoWriter();
        piece.bytes(1, name);
        piece.float32(2, v.scores[id]);
        piece.varint(3, uint64_t(type));
        model.bytes(1, piece.data());
    }

    ProtoWriter trainer;
    trainer.varint(3, 2);  // model_type = BPE: merge the best-scoring pair first, like llama.cpp's SPM
    trainer.int32(4, v.size());
    trainer.boolean(35, byteFallback);
    trainer.int32(40, unk);
    trainer.bytes(45, v.texts[unk].empty() ? std::string("<unk>") : v.texts[unk]);
    model.bytes(2, trainer.data());

    ProtoWriter normalizer;
    normalizer.bytes(1, "identity");
    normalizer.boolean(3, false);  // add_dummy_prefix
    normalizer.boolean(4, false);  // remove_extra_whitespaces: llama.cpp ignores the GGUF flag for SPM
    normalizer.boolean(5, true);  // escape_whitespaces: ' ' -> U+2581
    model.bytes(3, normalizer.data());
    return model.data();
}

}  // namespace

SpmTokenizer::SpmTokenizer(std::shared_ptr<Vocabulary> vocab)
    : Tokenizer(vocab), processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
    auto status = processor_->LoadFromSerializedProto(buildModelProto(*vocab));
    if (!status.ok()) throw Error(kWhere, "sentencepiece rejected the vocabulary: " + status.ToString());
    vocab->pieces.resize(size_t(vocab->size()));
    for (int32_t id = 0; id < vocab->size(); ++id) vocab->pieces[size_t(id)] = spmPiece(*vocab, id);
}

SpmTokenizer::~SpmTokenizer() = default;

std::vector<int32_t> SpmTokenizer::encodeFragments(const std::vector<Fragment>& fragments, bool addSpecial) const {
    const Vocabulary& v = vocab();
    std::vector<int32_t> out;
    size_t bytes = 0;
    for (const Fragment& f : fragments) bytes += f.text.size();
    out.reserve(bytes / 3 + 4);
    if (addSpecial && v.addBos && v.bos >= 0) out.push_back(v.bos);
    bool afterSpecial = true;  // the call's start counts as following a special token
    std::string piece;
    std::vector<int> ids;
    for (const Fragment& f : fragments) {
        if (f.token >= 0) {
            out.push_back(f.token);
            afterSpecial = true;
            continue;
        }
        piece.clear();
        if (v.addSpacePrefix && afterSpecial) piece += ' ';
        piece.append(f.text);
        ids.clear();
        auto status = processor_->Encode(piece, &ids);
        if (!status.ok()) throw Error(kWhere, "sentencepiece failed to encode: " + status.ToString());
        out.insert(out.end(), ids.begin(), ids.end());
        afterSpecial = false;
    }
    if (addSpecial && v.addEos && v.eos >= 0) out.push_back(v.eos);
    return out;
}

}  // namespace cairn::tokenizer
