#include "api_request.h"

#include "api_error.h"

#include "cairn/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace cairn::server {
namespace {

using nlohmann::json;

json parseObject(const std::string& body) {
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw badRequest("the request body is not valid JSON");
    if (!j.is_object()) throw badRequest("the request body must be a JSON object");
    return j;
}

double number(const json& j, const char* key, double lo, double hi, double fallback) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_number()) throw badRequest(std::string("'") + key + "' must be a number", key);
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
        throw badRequest(std::string("'") + key + "' must be between " + json(lo).dump() + " and " + json(hi).dump(),
                         key);
    return v;
}

std::optional<int64_t> integer(const json& j, const char* key, int64_t lo, int64_t hi) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer()) throw badRequest(std::string("'") + key + "' must be an integer", key);
    const auto v = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(INT64_MAX) ? hi + 1 : it->get<int64_t>();
    if (v < lo || v > hi)
        throw badRequest(
            std::string("'") + key + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi), key);
    return v;
}

std::string text(const json& value, const std::string& param) {
    if (!value.is_string()) throw badRequest("'" + param + "' must be a string", param);
    std::string s = value.get<std::string>();
    if (!text::isValidUtf8(s)) throw badRequest("'" + param + "' is not valid UTF-8", param);
    return s;
}

// OpenAI's logit_bias: {"token id": bias in [-100, 100]}. Ids are checked
// against the vocabulary by the server, which knows the model.
std::vector<LogitBias> logitBias(const json& j) {
    std::vector<LogitBias> out;
    auto it = j.find("logit_bias");
    if (it == j.end() || it->is_null()) return out;
    constexpr size_t kMaxEntries = 1024;
    if (!it->is_object() || it->size() > kMaxEntries)
        throw badRequest("'logit_bias' must be an object of at most 1024 token ids", "logit_bias");
    for (const auto& [key, value] : it->items()) {
        const bool digits = !key.empty() && key.size() <= 9 &&
            std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) throw badRequest("'logit_bias' key '" + key.substr(0, 32) + "' is not a token id", "logit_bias");
        if (!value.is_number() || value.get<double>() < -100 || value.get<double>() > 100)
            throw badRequest("'logit_bias' values must be numbers between -100 and 100", "logit_bias");
        out.push_back({int32_t(std::stol(key)), float(value.get<double>())});
    }
    return out;
}

GenerationParams generationParams(const json& j, const char* maxTokensKey) {
    GenerationParams p;
    if (auto it = j.find("model"); it != j.end() && !it->is_null()) p.model = text(*it, "model");
    SamplerOptions& s = p.sampler;
    s.temperature = float(number(j, "temperature", 0, 2, s.temperature));
    s.topP = float(number(j, "top_p", 0, 1, s.topP));
    s.minP = float(number(j, "min_p", 0, 1, s.minP));
    s.topK = int32_t(integer(j, "top_k", 0, 1 << 20).value_or(s.topK));
    s.frequencyPenalty = float(number(j, "frequency_penalty", -2, 2, s.frequencyPenalty));
    s.presencePenalty = float(number(j, "presence_penalty", -2, 2, s.presencePenalty));
    s.repeatPenalty = float(number(j, "repetition_penalty", 0.01, 10, s.repeatPenalty));
    if (auto seed = integer(j, "seed", INT64_MIN, INT64_MAX)) s.seed = uint64_t(*seed);
    else s.seed = std::random_device{}();
    s.logitBias = logitBias(j);
    constexpr int64_t kMaxTokens = int64_t(1) << 20;
    p.maxTokens = integer(j, maxTokensKey, 1, kMaxTokens);
    if (!p.maxTokens) p.maxTokens = integer(j, "max_tokens", 1, kMaxTokens);
    if (auto n = integer(j, "n", 1, 1); n && *n != 1) throw badRequest("only 'n' = 1 is supported", "n");
    if (auto it = j.find("stop"); it != j.end() && !it->is_null()) {
        if (it->is_string()) p.stop.push_back(text(*it, "stop"));
        else if (it->is_array() && it->size() <= 4)
            for (const auto& s : *it) p.stop.push_back(text(s, "stop"));
        else throw badRequest("'stop' must be a string or a list of at most 4 strings", "stop");
        for (const auto& s : p.stop)
            if (s.empty()) throw badRequest("a stop sequence must not be empty", "stop");
    }
    if (auto it = j.find("stream"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean()) throw badRequest("'stream' must be true or false", "stream");
        p.stream = it->get<bool>();
    }
    if (auto it = j.find("stream_options"); it != j.end() && it->is_object())
        if (auto u = it->find("include_usage"); u != it->end() && u->is_boolean()) p.includeUsage = u->get<bool>();
    return p;
}

// OpenAI's content: a string, null (an assistant turn with tool calls), or a
// list of parts of which the text ones are joined.
std::string messageContent(const json& content, size_t index) {
    const std::string param = "messages[" + std::to_string(index) + "].content";
    if (content.is_null()) return {};
    if (content.is_string()) return text(content, param);
    if (!content.is_array()) throw badRequest("'" + param + "' must be a string or a list of parts", param);
    std::string joined;
    for (const auto& part : content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text"))
            throw badRequest("'" + param + "': only text parts are supported", param);
        joined += text(part["text"], param);
    }
    return joined;
}

}  // namespace

ChatRequest parseChatRequest(const std::string& body) {
    const json j = parseObject(body);
    ChatRequest r;
    r.params = generationParams(j, "max_completion_tokens");
    auto it = j.find("messages");
    if (it == j.end() || !it->is_array() || it->empty())
        throw badRequest("'messages' must be a non-empty list", "messages");
    for (size_t i = 0; i < it->size(); ++i) {
        const json& m = (*it)[i];
        const std::string param = "messages[" + std::to_string(i) + "]";
        if (!m.is_object() || !m.contains("role"))
            throw badRequest("'" + param + "' must be an object with a role", param);
        std::string role = text(m["role"], param + ".role");
        if (role == "developer") role = "system";  // OpenAI's newer name for it
        if (role != "system" && role != "user" && role != "assistant" && role != "tool")
            throw badRequest("'" + param + ".role' must be system, developer, user, assistant or tool",
                             param + ".role");
        r.messages.push_back({std::move(role), messageContent(m.value("content", json()), i)});
    }
    return r;
}

CompletionRequest parseCompletionRequest(const std::string& body) {
    const json j = parseObject(body);
    CompletionRequest r;
    r.params = generationParams(j, "max_tokens");
    auto it = j.find("prompt");
    if (it == j.end()) throw badRequest("'prompt' is required", "prompt");
    if (it->is_array() && it->size() == 1) r.prompt = text((*it)[0], "prompt");
    else r.prompt = text(*it, "prompt");
    if (!j.contains("max_tokens")) r.params.maxTokens = 16;  // OpenAI's default for completions
    return r;
}

}  // namespace cairn::server
