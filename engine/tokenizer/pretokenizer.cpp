#include "pretokenizer.h"

#include "cairn/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <initializer_list>

namespace cairn::tokenizer {
namespace {

constexpr const char* kWhere = "tokenizer";

// The regexes, as llama.cpp adapts them from each model's tokenizer.json.
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen35 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kDeepseekLlmLetters =
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f"
    "\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d"
    "\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
    "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
    "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
    "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+";
constexpr const char* kCjk = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+";

struct Spec {
    std::initializer_list<const char*> names;
    std::initializer_list<const char*> regexes;
    bool ignoreMerges = false;
};

const std::initializer_list<Spec>& specs() {
    static const std::initializer_list<Spec> table = {
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
         {kLlama3},
         true},
        {{"dbrx", "smaug-bpe", "glm4", "chatglm-bpe"}, {kLlama3}},
        {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "solar-open", "megrez", "grok-2"},
         {kQwen2}},
        {{"qwen35"}, {kQwen35}},
        {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
          "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4", "mpt", "olmo", "jais", "trillion",
          "granite-docling"},
         {kGpt2}},
        {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
         {R"(\p{N})", kGpt2}},
        {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}},
        {{"deepseek-llm"},
         {"[\r\n]", kDeepseekLlmLetters, "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+", R"(\s+$)",
          kCjk, R"(\p{N}+)"}},
        {{"deepseek-coder"}, {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"}},
        {{"deepseek-v3", "hunyuan-dense", "joyai-llm"},
         {R"(\p{N}{1,3})", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
          R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
        {{"poro-chat", "bloom", "gpt3-finnish"}, {" ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"}},
        {{"viking"}, {" ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+", R"(\p{N})"}},
        {{"tekken"},
         {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
         true},
        {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"},
         {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
        {{"seed-coder"},
         {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
        {{"bailingmoe", "bailingmoe2", "llada-moe"},
         {R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
        {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
    };
    return table;
}

const Spec* findSpec(const std::string& name) {
    for (const auto& spec : specs())
        if (std::find_if(spec.names.begin(), spec.names.end(), [&](const char* n) { return name == n; }) !=
            spec.names.end())
            return &spec;
    return nullptr;
}

}  // namespace

struct PreTokenizer::Regex {
    pcre2_code* code = nullptr;
    ~Regex() { pcre2_code_free(code); }
};

bool PreTokenizer::known(const std::string& name) { return findSpec(name) != nullptr; }

PreTokenizer::PreTokenizer(const std::string& name) {
    const Spec* spec = findSpec(name);
    if (!spec) throw Error(kWhere, "unsupported pre-tokenizer '" + name + "'");
    ignoreMerges_ = spec->ignoreMerges;
    for (const char* pattern : spec->regexes) {
        auto regex = std::make_unique<Regex>();
        int error = 0;
        PCRE2_SIZE offset = 0;
        regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                    PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error, &offset, nullptr);
        if (!regex->code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error, message, sizeof message);
            throw Error(kWhere,
                        "pre-tokenizer '" + name + "': regex does not compile at offset " + std::to_string(offset) +
                            ": " + reinterpret_cast<const char*>(message));
        }
        pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
        regexes_.push_back(std::move(regex));
    }
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
    std::vector<std::string_view> words{text}, next;
    if (text.empty()) return {};
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(pcre2_match_data_create(1, nullptr),
                                                                              &pcre2_match_data_free);
    std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> context(nullptr,
                                                                                      &pcre2_match_context_free);
    std::unique_ptr<pcre2_jit_stack, decltype(&pcre2_jit_stack_free)> stack(nullptr, &pcre2_jit_stack_free);
    if (!match) throw Error(kWhere, "out of memory");

    for (const auto& regex : regexes_) {
        next.clear();
        for (std::string_view word : words) {
            auto subject = reinterpret_cast<PCRE2_SPTR>(word.data());
            size_t start = 0;  // end of the previous match
            size_t at = 0;  // where to search from
            while (at <= word.size()) {
                int rc =
                    pcre2_match(regex->code, subject, word.size(), at, PCRE2_NO_UTF_CHECK, match.get(), context.get());
                if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !stack) {
                    // Long runs can need more than JIT's default 32 KiB stack.
                    context.reset(pcre2_match_context_create(nullptr));
                    stack.reset(pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, nullptr));
                    if (!context || !stack) throw Error(kWhere, "out of memory");
                    pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
                    continue;
                }
                if (rc == PCRE2_ERROR_NOMATCH) break;
                if (rc < 0) throw Error(kWhere, "pre-tokenizer regex failed (PCRE2 error " + std::to_string(rc) + ")");
                PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
                size_t b = ov[0], e = ov[1];
                if (e == b) {  // empty match: move on by one character
                    at = b + 1;
                    while (at < word.size() && (static_cast<unsigned char>(word[at]) & 0xC0) == 0x80) ++at;
                    continue;
                }
                if (b > start) next.push_back(word.substr(start, b - start));
                next.push_back(word.substr(b, e - b));
                start = at = e;
            }
            if (start < word.size()) next.push_back(word.substr(start));
        }
        words.swap(next);
    }
    return words;
}

}  // namespace cairn::tokenizer
