// Export and import of one conversation: pure functions over ConversationData
// (Store::conversationData / Store::importConversation do the database part).
//
// JSON (format "cairn.conversation", version 1) keeps the whole message tree:
//   {"format": "cairn.conversation", "version": 1, "title": ..., "model_path": ...,
//    "model_fingerprint": ..., "system_prompt": ..., "settings": {...},
//    "created_ms": ..., "updated_ms": ..., "pinned": false, "active_leaf": id|null,
//    "messages": [{"id": 1, "parent": null, "role": "user", "content": "...",
//                  "created_ms": ..., "complete": true,
//                  "stats": {"token_count", "prefill_tokens", "prefill_ms", "decode_ms"}}, ...]}
// Message ids are only labels inside the file; a parent must come before its
// children. Markdown is for reading: the active branch only.
#pragma once

#include "cairn/store/records.h"

#include <nlohmann/json.hpp>

#include <string>

namespace cairn::store {

inline constexpr const char* kExportFormat = "cairn.conversation";
inline constexpr int kExportVersion = 1;

nlohmann::json toJson(const ConversationData& data);
// Throws cairn::Error("import", ...) naming the first field that is wrong.
ConversationData fromJson(const nlohmann::json& json);
// Parses text first (a parse error is a cairn::Error too).
ConversationData fromJsonText(const std::string& text);

// The branch ending at the active leaf (or the newest message) as Markdown.
std::string toMarkdown(const ConversationData& data);

} // namespace cairn::store
