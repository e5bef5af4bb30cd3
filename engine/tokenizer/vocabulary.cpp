#include "vocabulary.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace cairn::tokenizer {
namespace {

constexpr const char* kWhere = "tokenizer";

// Pre-tokenizers whose llama.cpp default is to add BOS when the flag is absent.
bool preAddsBosByDefault(std::string_view pre) {
    static constexpr std::array names = {"llama3",   "llama-v3", "llama-bpe",    "falcon3", "falcon-h1", "pixtral",
                                         "midm-2.0", "lfm2",     "jina-v5-nano", "tekken",  "chameleon"};
    return std::find(names.begin(), names.end(), pre) != names.end();
}

// Texts that llama.cpp treats as end-of-generation tokens (llama-vocab.cpp, "special_eog_ids").
constexpr std::array kEogTexts = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81"
    "of\xE2\x96\x81"
    "sentence\xEF\xBD\x9C>",
    "[e~[",
};
// Texts searched for an end-of-turn token when `eot_token_id` is absent, in order of preference.
constexpr std::array kEotTexts = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81"
    "of\xE2\x96\x81"
    "sentence\xEF\xBD\x9C>",
    "<end_of_utterance>",
};
constexpr std::array kFimPadTexts = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::array kFimRepTexts = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::array kFimSepTexts = {"<|file_sep|>"};

uint32_t attrFromType(int64_t type) {
    switch (type) {
    case 1: return AttrNormal;
    case 2: return AttrUnknown;
    case 3: return AttrControl;
    case 4: return AttrUserDefined;
    case 5: return AttrUnused;
    case 6: return AttrByte;
    default: return AttrUndefined;
    }
}

const gguf::Value* findArray(const gguf::File& file, const char* key, uint64_t minSize, bool strings) {
    const gguf::Value* v = file.find(key);
    if (!v) return nullptr;
    if (!v->isArray()) throw Error(kWhere, std::string(key) + " is not an array");
    bool isString = v->elementType() == gguf::ValueType::String;
    if (strings != isString)
        throw Error(kWhere,
                    std::string(key) + " has elements of type " + std::string(gguf::valueTypeName(v->elementType())));
    if (!strings && v->elementType() == gguf::ValueType::Array)
        throw Error(kWhere, std::string(key) + " is an array of arrays");
    if (v->size() < minSize)
        throw Error(kWhere,
                    std::string(key) + " has " + std::to_string(v->size()) + " entries for " + std::to_string(minSize) +
                        " tokens");
    return v;
}

}  // namespace

int byteTokenValue(std::string_view text) {
    auto hex = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    if (text.size() != 6 || !text.starts_with("<0x") || text[5] != '>') return -1;
    const int hi = hex(text[3]), lo = hex(text[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void Vocabulary::checkId(int32_t id) const {
    if (!valid(id))
        throw Error(kWhere,
                    "token id " + std::to_string(id) + " is out of range (vocabulary has " + std::to_string(size()) +
                        " tokens)");
}

void Vocabulary::load(const gguf::File& file) {
    std::string model(file.getString("tokenizer.ggml.model"));
    if (model.empty()) throw Error(kWhere, "the file has no tokenizer (tokenizer.ggml.model missing)");
    if (model == "llama") kind = Kind::Spm;
    else if (model == "gpt2") kind = Kind::Bpe;
    else throw Error(kWhere, "unsupported tokenizer model '" + model + "' (supported: llama, gpt2)");
    pre = std::string(file.getString("tokenizer.ggml.pre"));
    // Without a pre-tokenizer name llama.cpp guesses "default" (and warns of degraded
    // output); a byte-level BPE vocabulary's own rule is GPT-2's regex, which is what
    // the name-less gpt-neox vocabulary (Mamba) needs.
    if (pre.empty()) pre = kind == Kind::Bpe ? "gpt-2" : "default";

    const gguf::Value* tokens = findArray(file, "tokenizer.ggml.tokens", 0, true);
    if (!tokens) throw Error(kWhere, "tokenizer.ggml.tokens missing");
    if (tokens->size() == 0) throw Error(kWhere, "tokenizer.ggml.tokens is empty");
    if (tokens->size() > uint64_t(INT32_MAX)) throw Error(kWhere, "tokenizer.ggml.tokens has too many entries");
    auto views = tokens->strings();
    const uint64_t n = views.size();
    texts.assign(views.begin(), views.end());

    scores.assign(n, 0.f);
    if (const gguf::Value* s = findArray(file, "tokenizer.ggml.scores", n, false)) {
        auto values = s->numbers();
        for (uint64_t i = 0; i < n; ++i) scores[i] = float(values[i]);
    }
    types.assign(n, 1);
    if (const gguf::Value* t = findArray(file, "tokenizer.ggml.token_type", n, false)) {
        auto values = t->numbers();
        for (uint64_t i = 0; i < n; ++i) types[i] = int32_t(values[i]);
    }
    attrs.resize(n);
    for (uint64_t i = 0; i < n; ++i) attrs[i] = attrFromType(types[i]);
    byText.build(std::vector<std::string_view>(texts.begin(), texts.end()), true);

    // Defaults per kind (llama.cpp), then the file's values.
    if (kind == Kind::Spm) {
        bos = 1;
        eos = 2;
        unk = 0;
        addBos = true;
        addSpacePrefix = true;
    } else {
        bos = 11;
        eos = 11;
        addBos = preAddsBosByDefault(pre);
        if (pre == "glm4" || pre == "chatglm-bpe") bos = -1;
    }
    int32_t fimPad = -1, fimRep = -1, fimSep = -1;
    auto readId = [&](const char* key, int32_t& id) {
        if (id >= size()) id = -1;
        const gguf::Value* v = file.find(key);
        if (!v) return;
        int64_t value = v->asInt();
        if (value >= 0 && value < size()) id = int32_t(value);
    };
    readId("tokenizer.ggml.bos_token_id", bos);
    readId("tokenizer.ggml.eos_token_id", eos);
    readId("tokenizer.ggml.eot_token_id", eot);
    readId("tokenizer.ggml.eom_token_id", eom);
    readId("tokenizer.ggml.unknown_token_id", unk);
    readId("tokenizer.ggml.padding_token_id", pad);
    readId("tokenizer.ggml.fim_pad_token_id", fimPad);
    readId("tokenizer.ggml.fim_rep_token_id", fimRep);
    readId("tokenizer.ggml.fim_sep_token_id", fimSep);
    addBos = file.getBool("tokenizer.ggml.add_bos_token", addBos);
    addEos = file.getBool("tokenizer.ggml.add_eos_token", addEos);
    addSpacePrefix = file.getBool("tokenizer.ggml.add_space_prefix", addSpacePrefix);

    // Tokens found by their text are forced to control type, as llama.cpp does.
    auto detect = [&](int32_t& id, auto const& candidates) {
        if (id != -1) return;
        for (const char* text : candidates) {
            int32_t found = find(text);
            if (found >= 0) {
                id = found;
                attrs[found] |= AttrControl;
                return;
            }
        }
    };
    detect(eot, kEotTexts);
    detect(eom, std::array{"<|eom_id|>"});
    detect(fimPad, kFimPadTexts);
    detect(fimRep, kFimRepTexts);
    detect(fimSep, kFimSepTexts);

    for (int32_t id : {fimPad, fimRep, fimSep})
        if (id >= 0) eog.insert(id);
    for (const char* text : kEogTexts) {
        int32_t id = find(text);
        if (id < 0) continue;
        eog.insert(id);
        attrs[id] |= AttrControl;
    }
    // gpt-oss: these markers are always rendered.
    for (const char* text : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
        if (int32_t id = find(text); id >= 0) attrs[id] = AttrUserDefined;
    for (int32_t id : {eos, eot, eom})
        if (id >= 0) eog.insert(id);
    // o200k_harmony / solar-open: "<|end|>" does not end generation there.
    {
        auto inEog = [&](const char* text) {
            int32_t id = find(text);
            return id >= 0 && eog.count(id) ? id : -1;
        };
        int32_t end = inEog("<|end|>");
        bool ret = inEog("<|return|>") >= 0, call = inEog("<|call|>") >= 0 || inEog("<|calls|>") >= 0;
        bool flush = inEog("<|flush|>") >= 0;
        if (end >= 0 && ((ret && call) || (call && flush))) {
            eog.erase(end);
            attrs[end] = AttrUserDefined;
        }
        int32_t s = inEog("</s>");
        if (s >= 0 && inEog("<|tool_response>") >= 0) {
            eog.erase(s);
            attrs[s] = AttrNormal;
        }
    }

    for (int32_t id = 0; id < size(); ++id)
        if ((attrs[id] & (AttrControl | AttrUserDefined | AttrUnknown)) && !texts[id].empty()) specials.push_back(id);
    std::stable_sort(specials.begin(), specials.end(),
                     [&](int32_t a, int32_t b) { return texts[a].size() > texts[b].size(); });

    // Phi-3 strips spaces after most of its special tokens (llama.cpp sets this by model name).
    std::string name(file.getString("general.name"));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (int32_t id : specials) attrs[id] |= AttrRStrip;
        if (int32_t id = find("</s>"); id >= 0) attrs[id] |= AttrRStrip;
        for (const char* text : {"<unk>", "<s>", "<|endoftext|>"})
            if (int32_t id = find(text); id >= 0) attrs[id] &= ~uint32_t(AttrRStrip);
    }
}

}  // namespace cairn::tokenizer
