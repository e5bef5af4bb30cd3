// Plain values the store reads and writes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::store {

struct Conversation {
    int64_t id = 0;
    std::string title;
    std::string modelPath;
    std::string modelFingerprint;
    std::string systemPrompt;
    nlohmann::json settings = nlohmann::json::object();  // per-chat overrides
    int64_t createdMs = 0;
    int64_t updatedMs = 0;
    bool pinned = false;
    std::optional<int64_t> activeLeafId;  // the branch shown; see Store::activeLeaf
    std::optional<int64_t> deletedMs;  // set while soft-deleted
};

enum class Role { System, User, Assistant, Tool };
std::string_view roleName(Role role);
// Throws cairn::Error for a name that is not a role.
Role roleFromName(std::string_view name);

struct MessageStats {
    int64_t tokenCount = 0;  // tokens of this message's content
    int64_t prefillTokens = 0;  // tokens prefilled before the reply started
    double prefillMs = 0;
    double decodeMs = 0;
    int64_t reasoningMs = 0;  // how long the model reasoned before its answer (0: it did not)
    double prefillTokensPerSecond() const { return prefillMs > 0 ? prefillTokens * 1000.0 / prefillMs : 0; }
    double decodeTokensPerSecond() const { return decodeMs > 0 ? tokenCount * 1000.0 / decodeMs : 0; }
    bool operator==(const MessageStats&) const = default;
};

struct Message {
    int64_t id = 0;
    int64_t conversationId = 0;
    std::optional<int64_t> parentId;  // nullopt for a root
    Role role = Role::User;
    std::string content;  // the text shown (an assistant's answer, after its reasoning)
    // A reasoning model's reasoning before `content`, exactly as generated (its
    // markers included, see cairn/reasoning.h): reasoning + content is the reply.
    // Kept out of search and (unless asked) export.
    std::string reasoning;
    int64_t createdMs = 0;
    MessageStats stats;
    bool complete = true;  // false while (or if interrupted while) streaming
};

// The messages sharing one parent, in order, and where a given one stands:
// the `< index+1 / ids.size() >` of branch switching.
struct Siblings {
    std::vector<int64_t> ids;
    size_t index = 0;
};

struct SearchHit {
    int64_t conversationId = 0;
    int64_t messageId = 0;
    std::string snippet;
};

struct SnapshotInfo {
    int64_t id = 0;
    int64_t conversationId = 0;
    int64_t messageId = 0;
    std::string modelFingerprint;
    int64_t tokenCount = 0;
    int64_t sizeBytes = 0;
    int64_t createdMs = 0;
    int64_t lastUsedMs = 0;
};

// One conversation with all its messages (parents before children): the unit
// of export and import.
struct ConversationData {
    Conversation conversation;
    std::vector<Message> messages;
};

}  // namespace cairn::store
