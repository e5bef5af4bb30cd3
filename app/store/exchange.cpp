#include "cairn/store/exchange.h"

#include "cairn/error.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unordered_map>

namespace cairn::store {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& what) { throw Error("import", field + ": " + what); }

const json* member(const json& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string mib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
    return buf;
}

std::string text(const json& object, const char* key, const std::string& field, bool required = false,
                 size_t maxBytes = kImportMaxFieldBytes) {
    const json* v = member(object, key);
    if (!v) {
        if (required) bad(field + key, "missing");
        return {};
    }
    if (!v->is_string()) bad(field + key, "expected a string");
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > maxBytes)
        bad(field + key, std::to_string(s.size()) + " bytes, more than the limit of " + std::to_string(maxBytes));
    return s;
}

int64_t integer(const json& object, const char* key, const std::string& field) {
    const json* v = member(object, key);
    if (!v) return 0;
    if (!v->is_number_integer()) bad(field + key, "expected an integer");
    return v->get<int64_t>();
}

std::optional<int64_t> optInteger(const json& object, const char* key, const std::string& field) {
    if (!member(object, key)) return std::nullopt;
    return integer(object, key, field);
}

double number(const json& object, const char* key, const std::string& field) {
    const json* v = member(object, key);
    if (!v) return 0;
    if (!v->is_number()) bad(field + key, "expected a number");
    return v->get<double>();
}

bool boolean(const json& object, const char* key, const std::string& field, bool fallback) {
    const json* v = member(object, key);
    if (!v) return fallback;
    if (!v->is_boolean()) bad(field + key, "expected true or false");
    return v->get<bool>();
}

Message messageFromJson(const json& j, const std::string& field) {
    if (!j.is_object()) bad(field, "expected an object");
    Message m;
    const json* id = member(j, "id");
    if (!id || !id->is_number_integer()) bad(field + "id", "expected an integer");
    m.id = id->get<int64_t>();
    m.parentId = optInteger(j, "parent", field);
    const std::string role = text(j, "role", field, true);
    try {
        m.role = roleFromName(role);
    } catch (const Error&) {
        bad(field + "role", "unknown role '" + role + "'");
    }
    m.content = text(j, "content", field, true, kImportMaxTextBytes);
    m.createdMs = integer(j, "created_ms", field);
    m.complete = boolean(j, "complete", field, true);
    if (const json* s = member(j, "stats")) {
        if (!s->is_object()) bad(field + "stats", "expected an object");
        const std::string sf = field + "stats.";
        m.stats.tokenCount = integer(*s, "token_count", sf);
        m.stats.prefillTokens = integer(*s, "prefill_tokens", sf);
        m.stats.prefillMs = number(*s, "prefill_ms", sf);
        m.stats.decodeMs = number(*s, "decode_ms", sf);
        m.stats.reasoningMs = std::max<int64_t>(0, integer(*s, "reasoning_ms", sf));
    }
    m.reasoning = text(j, "reasoning", field, false, kImportMaxTextBytes);
    return m;
}

std::string trimmed(const std::string& s) {
    const size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) return {};
    return s.substr(begin, s.find_last_not_of(" \t\r\n") + 1 - begin);
}

// The answer as shown: after reasoning, the blank line before it is not part of it.
std::string trimmedAnswer(const Message& m) { return m.reasoning.empty() ? m.content : trimmed(m.content); }

const char* heading(Role role) {
    switch (role) {
    case Role::System: return "System";
    case Role::User: return "User";
    case Role::Assistant: return "Assistant";
    case Role::Tool: return "Tool";
    }
    return "User";
}

}  // namespace

nlohmann::json toJson(const ConversationData& data, const ExportOptions& options) {
    const Conversation& c = data.conversation;
    json messages = json::array();
    for (const Message& m : data.messages) {
        json& added = messages.emplace_back(json{
            {"id", m.id},
            {"parent", m.parentId ? json(*m.parentId) : json(nullptr)},
            {"role", roleName(m.role)},
            {"content", m.content},
            {"created_ms", m.createdMs},
            {"complete", m.complete},
            {"stats",
             {{"token_count", m.stats.tokenCount},
              {"prefill_tokens", m.stats.prefillTokens},
              {"prefill_ms", m.stats.prefillMs},
              {"decode_ms", m.stats.decodeMs}}},
        });
        if (options.includeReasoning && !m.reasoning.empty()) {
            added["reasoning"] = m.reasoning;
            added["stats"]["reasoning_ms"] = m.stats.reasoningMs;
        }
    }
    return {
        {"format", kExportFormat},
        {"version", kExportVersion},
        {"title", c.title},
        {"model_path", c.modelPath},
        {"model_fingerprint", c.modelFingerprint},
        {"system_prompt", c.systemPrompt},
        {"settings", c.settings.is_object() ? c.settings : json::object()},
        {"created_ms", c.createdMs},
        {"updated_ms", c.updatedMs},
        {"pinned", c.pinned},
        {"active_leaf", c.activeLeafId ? json(*c.activeLeafId) : json(nullptr)},
        {"messages", std::move(messages)},
    };
}

ConversationData fromJson(const nlohmann::json& j) {
    if (!j.is_object()) bad("document", "expected a JSON object");
    if (text(j, "format", "", true) != kExportFormat) bad("format", std::string("expected \"") + kExportFormat + "\"");
    const int64_t version = integer(j, "version", "");
    if (version < 1 || version > kExportVersion) bad("version", "unsupported version " + std::to_string(version));
    ConversationData data;
    Conversation& c = data.conversation;
    c.title = text(j, "title", "", false, kImportMaxTitleBytes);
    c.modelPath = text(j, "model_path", "");
    c.modelFingerprint = text(j, "model_fingerprint", "");
    c.systemPrompt = text(j, "system_prompt", "", false, kImportMaxTextBytes);
    if (const json* s = member(j, "settings")) {
        if (!s->is_object()) bad("settings", "expected an object");
        c.settings = *s;
    }
    c.createdMs = integer(j, "created_ms", "");
    c.updatedMs = integer(j, "updated_ms", "");
    c.pinned = boolean(j, "pinned", "", false);
    c.activeLeafId = optInteger(j, "active_leaf", "");
    const json* messages = member(j, "messages");
    if (!messages || !messages->is_array()) bad("messages", "expected an array");
    if (messages->size() > kImportMaxMessages)
        bad("messages",
            std::to_string(messages->size()) + " messages, more than the limit of " +
                std::to_string(kImportMaxMessages));
    data.messages.reserve(messages->size());
    for (size_t i = 0; i < messages->size(); ++i)
        data.messages.push_back(messageFromJson((*messages)[i], "messages[" + std::to_string(i) + "]."));
    return data;
}

ConversationData fromJsonText(const std::string& textIn) {
    // Counted while parsing, before a deep or huge document is built (and
    // before copying or destroying one could recurse that deep).
    uint64_t values = 0;
    auto limits = [&values](int depth, json::parse_event_t event, json&) {
        if (depth > kImportMaxDepth)
            bad("document", "nested deeper than the limit of " + std::to_string(kImportMaxDepth) + " levels");
        if ((event == json::parse_event_t::value || event == json::parse_event_t::object_start ||
             event == json::parse_event_t::array_start) &&
            ++values > kImportMaxValues)
            bad("document", "more than the limit of " + std::to_string(kImportMaxValues) + " JSON values");
        return true;
    };
    json j = json::parse(textIn, limits, false);
    if (j.is_discarded()) throw Error("import", "not valid JSON");
    return fromJson(j);
}

ConversationData fromJsonFile(const std::string& path) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) throw Error("import", path + ": " + ec.message());
    if (size > kImportMaxFileBytes)
        throw Error("import",
                    path + ": " + mib(size) + ", more than the limit of " + mib(kImportMaxFileBytes) +
                        " for an imported conversation");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("import", path + ": cannot be opened");
    // Read no more than the limit allows, even if the file grows meanwhile.
    std::string text(size_t(size) + 1, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(in.gcount()));
    if (text.size() > kImportMaxFileBytes)
        throw Error("import", path + ": larger than the limit of " + mib(kImportMaxFileBytes));
    return fromJsonText(text);
}

std::string toMarkdown(const ConversationData& data, const ExportOptions& options) {
    std::unordered_map<int64_t, const Message*> byId;
    for (const Message& m : data.messages) byId[m.id] = &m;
    std::optional<int64_t> leaf = data.conversation.activeLeafId;
    if ((!leaf || !byId.count(*leaf)) && !data.messages.empty()) leaf = data.messages.back().id;

    std::vector<const Message*> path;  // leaf first; bounded by the message count
    for (auto at = leaf; at && path.size() <= data.messages.size();) {
        auto it = byId.find(*at);
        if (it == byId.end()) break;
        path.push_back(it->second);
        at = it->second->parentId;
    }

    const std::string& title = data.conversation.title;
    std::string out = "# " + (title.empty() ? std::string("Untitled conversation") : title) + "\n";
    if (!data.conversation.modelPath.empty()) out += "\n*Model: " + data.conversation.modelPath + "*\n";
    if (!data.conversation.systemPrompt.empty()) out += "\n## System\n\n" + data.conversation.systemPrompt + "\n";
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
        const Message& m = **it;
        out += std::string("\n## ") + heading(m.role) + "\n\n";
        if (options.includeReasoning && !m.reasoning.empty())
            out += "Reasoning (as the model wrote it):\n\n````text\n" + trimmed(m.reasoning) + "\n````\n\n";
        out += trimmedAnswer(m) + "\n";
        if (!m.complete) out += "\n*(incomplete)*\n";
    }
    return out;
}

}  // namespace cairn::store
