// Export and import of one conversation: pure functions over ConversationData
// (Store::conversationData / Store::importConversation do the database part).
//
// JSON (format "cairn.conversation", version 1) keeps the whole message tree:
//   {"format": "cairn.conversation", "version": 1, "title": ..., "model_path": ...,
//    "model_fingerprint": ..., "system_prompt": ..., "settings": {...},
//    "created_ms": ..., "updated_ms": ..., "pinned": false, "active_leaf": id|null,
//    "messages": [{"id": 1, "parent": null, "role": "user", "content": "...",
//                  "created_ms": ..., "complete": true, "reasoning": "..." (optional),
//                  "stats": {"token_count", "prefill_tokens", "prefill_ms", "decode_ms",
//                            "reasoning_ms" (optional)}}, ...]}
// Message ids are only labels inside the file; a parent must come before its
// children. Markdown is for reading: the active branch only.
#pragma once

#include "cairn/store/records.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cairn::store {

inline constexpr const char* kExportFormat = "cairn.conversation";
inline constexpr int kExportVersion = 1;

// Limits on an imported file, far above any real conversation, so a hostile
// or broken file is one clear error instead of a frozen app or gigabytes of
// memory. Exceeding one names the limit.
inline constexpr uint64_t kImportMaxFileBytes = 256ull << 20;  // the file
inline constexpr int kImportMaxDepth = 32;  // JSON nesting (the format needs 4)
inline constexpr uint64_t kImportMaxValues = 4'000'000;  // JSON values in the file
inline constexpr size_t kImportMaxMessages = 100'000;  // per conversation
inline constexpr size_t kImportMaxTextBytes = 4u << 20;  // a message's content, the system prompt
inline constexpr size_t kImportMaxTitleBytes = 1024;  // the title
inline constexpr size_t kImportMaxFieldBytes = 4096;  // model path, fingerprint

struct ExportOptions {
    bool includeReasoning = false;  // a reasoning model's reasoning ("reasoning" in JSON; a quoted block in Markdown)
};

nlohmann::json toJson(const ConversationData& data, const ExportOptions& options = {});
// Throws cairn::Error("import", ...) naming the first field that is wrong.
ConversationData fromJson(const nlohmann::json& json);
// Parses text first (a parse error is a cairn::Error too); the nesting and
// value limits apply while parsing.
ConversationData fromJsonText(const std::string& text);
// Reads a file of at most kImportMaxFileBytes, then as fromJsonText.
ConversationData fromJsonFile(const std::string& path);

// The branch ending at the active leaf (or the newest message) as Markdown.
std::string toMarkdown(const ConversationData& data, const ExportOptions& options = {});

}  // namespace cairn::store
