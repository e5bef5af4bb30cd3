#include "remote_protocol.h"

#include <nlohmann/json.hpp>

#include <charconv>

namespace cairn::backend {

using nlohmann::json;

namespace {

json parseJson(std::string_view text, const char* what) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded())
        throw BackendError(FailureKind::BadReply, "remote reply", std::string(what) + " is not valid JSON");
    return j;
}

std::optional<int64_t> count(const json& j, const char* key) {
    if (!j.is_object()) return std::nullopt;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    const int64_t v = it->get<int64_t>();
    return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
}

void readUsage(const json& j, std::optional<int64_t>& prompt, std::optional<int64_t>& completion,
               std::optional<int64_t>& cached) {
    auto u = j.find("usage");
    if (u == j.end() || !u->is_object()) return;
    prompt = count(*u, "prompt_tokens");
    completion = count(*u, "completion_tokens");
    if (auto d = u->find("prompt_tokens_details"); d != u->end()) cached = count(*d, "cached_tokens");
}

// error.message of OpenAI's error shape (also a bare {"error": "text"}), if any.
std::optional<std::string> errorMessage(const json& j) {
    if (!j.is_object()) return std::nullopt;
    auto e = j.find("error");
    if (e == j.end()) return std::nullopt;
    if (e->is_string()) return e->get<std::string>();
    if (e->is_object()) {
        auto m = e->find("message");
        if (m != e->end() && m->is_string()) return m->get<std::string>();
    }
    return std::string("an error without a message");
}

}  // namespace

std::string oneLine(std::string_view text, size_t max, bool asciiOnly) {
    std::string out;
    size_t i = 0;
    for (; i < text.size() && out.size() < max; ++i) {
        const unsigned char c = uint8_t(text[i]);
        out += (c < 0x20 || c == 0x7f) ? ' ' : (asciiOnly && c >= 0x80) ? '?' : char(c);
    }
    const bool cut = i < text.size();
    if (cut) {  // no half character at the cut
        size_t lead = out.size();
        while (lead > 0 && (uint8_t(out[lead - 1]) & 0xC0) == 0x80) --lead;
        if (lead > 0 && uint8_t(out[lead - 1]) >= 0xC0) {
            const unsigned char c = uint8_t(out[lead - 1]);
            const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if (out.size() - (lead - 1) < need) out.resize(lead - 1);
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (cut) out += "...";
    return out;
}

std::string normalizeBaseUrl(std::string_view url) {
    std::string u(url);
    while (!u.empty() && (u.back() == ' ' || u.back() == '\n')) u.pop_back();
    const size_t scheme = u.find("://");
    const std::string s = scheme == std::string::npos ? std::string() : u.substr(0, scheme);
    if ((s != "http" && s != "https") || u.size() <= scheme + 3 || u[scheme + 3] == '/')
        throw Error("remote endpoint", "'" + oneLine(u, 200) + "' is not an http:// or https:// URL with a host");
    while (u.ends_with('/')) u.pop_back();
    if (u.find('/', scheme + 3) == std::string::npos) u += "/v1";
    return u;
}

std::string chatRequestBody(const TurnRequest& r, const std::string& model, bool stream) {
    json messages = json::array();
    for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", model}, {"messages", std::move(messages)}, {"stream", stream}};
    if (stream) body["stream_options"] = {{"include_usage", true}};
    if (r.maxTokens > 0) body["max_tokens"] = r.maxTokens;
    if (r.temperature) body["temperature"] = *r.temperature;
    if (r.topP) body["top_p"] = *r.topP;
    if (r.topK) body["top_k"] = *r.topK;
    if (r.minP) body["min_p"] = *r.minP;
    if (r.repeatPenalty) body["repetition_penalty"] = *r.repeatPenalty;
    if (r.seed) body["seed"] = *r.seed;
    return body.dump();
}

Finish finishFromReason(std::string_view reason) { return reason == "length" ? Finish::Length : Finish::Stop; }

ChunkDelta parseChunk(std::string_view data) {
    const json j = parseJson(data, "a streamed chunk");
    if (auto e = errorMessage(j))
        throw BackendError(FailureKind::Refused, "remote stream", "the server reported: " + oneLine(*e));
    if (!j.is_object()) throw BackendError(FailureKind::BadReply, "remote stream", "a chunk is not a JSON object");
    ChunkDelta d;
    readUsage(j, d.promptTokens, d.completionTokens, d.cachedTokens);
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array() || choices->empty()) return d;
    const json& c = (*choices)[0];
    if (!c.is_object()) return d;
    if (auto delta = c.find("delta"); delta != c.end() && delta->is_object())
        if (auto content = delta->find("content"); content != delta->end() && content->is_string())
            d.content = content->get<std::string>();
    if (auto f = c.find("finish_reason"); f != c.end() && f->is_string()) d.finishReason = f->get<std::string>();
    return d;
}

TurnResult parseCompletion(std::string_view body) {
    const json j = parseJson(body, "the reply");
    auto choices = j.is_object() ? j.find("choices") : j.end();
    if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object())
        throw BackendError(FailureKind::BadReply, "remote reply", "the reply has no choices");
    const json& c = (*choices)[0];
    TurnResult t;
    if (auto m = c.find("message"); m != c.end() && m->is_object())
        if (auto content = m->find("content"); content != m->end() && content->is_string())
            t.text = content->get<std::string>();
    auto f = c.find("finish_reason");
    t.finish = (f != c.end() && f->is_string()) ? finishFromReason(f->get<std::string>()) : Finish::Stop;
    readUsage(j, t.promptTokens, t.completionTokens, t.cachedTokens);
    return t;
}

std::vector<std::string> parseModelList(std::string_view body) {
    const json j = parseJson(body, "the model list");
    auto data = j.is_object() ? j.find("data") : j.end();
    if (data == j.end() || !data->is_array())
        throw BackendError(FailureKind::BadReply, "remote models", "the model list has no 'data' array");
    std::vector<std::string> ids;
    for (const auto& m : *data)
        if (m.is_object())
            if (auto id = m.find("id"); id != m.end() && id->is_string() && !id->get<std::string>().empty())
                ids.push_back(oneLine(id->get<std::string>(), 256));
    return ids;
}

int parseRetryAfter(std::string_view header) {
    while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
    while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
    int v = -1;
    auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), v);
    if (ec != std::errc() || end != header.data() + header.size() || v < 0) return -1;
    return v;
}

BackendError httpError(int status, std::string_view body, int retryAfter, const std::string& where) {
    std::string said;
    const json j = json::parse(body, nullptr, false);
    if (auto m = errorMessage(j)) said = oneLine(*m);
    else said = oneLine(body, 200, true);  // not JSON: maybe not UTF-8 either
    if (said.empty()) said = "no details";
    const std::string s = "(HTTP " + std::to_string(status) + "): " + said;
    switch (status) {
    case 401:
    case 403: return BackendError(FailureKind::Unauthorized, where, "the server refused the API key " + s, status);
    case 404:
        return BackendError(FailureKind::NotFound, where, "not found — check the base URL and the model name " + s,
                            status);
    case 429:
    case 503: {
        std::string when = retryAfter >= 0 ? "; retry after " + std::to_string(retryAfter) + " s" : "; retry later";
        return BackendError(FailureKind::Busy, where, "the server is busy " + s + when, status, retryAfter);
    }
    default: return BackendError(FailureKind::Refused, where, "the server refused the request " + s, status);
    }
}

}  // namespace cairn::backend
