// Internal: the column lists and row readers shared by the store's files.
#pragma once

#include "cairn/store/records.h"
#include "cairn/store/sqlite.h"

namespace cairn::store::rows {

inline constexpr const char* kConversationColumns =
    "id, title, model_path, model_fingerprint, system_prompt, settings_json, created_ms, "
    "updated_ms, pinned, active_leaf_id, deleted_ms";

inline constexpr const char* kMessageColumns =
    "id, conversation_id, parent_id, role, content, created_ms, token_count, prefill_tokens, "
    "prefill_ms, decode_ms, complete, reasoning, reasoning_ms";

inline constexpr const char* kSnapshotColumns =
    "id, conversation_id, message_id, model_fingerprint, token_count, size_bytes, created_ms, "
    "last_used_ms";

Conversation readConversation(const sql::Statement& s);
Message readMessage(const sql::Statement& s);
SnapshotInfo readSnapshot(const sql::Statement& s);

}  // namespace cairn::store::rows
