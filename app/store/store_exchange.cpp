// Store: reading a whole conversation out and inserting one (export / import).
#include "cairn/error.h"
#include "cairn/store/store.h"

#include "cairn/store/exchange.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace cairn::store {

ConversationData Store::conversationData(int64_t conversationId) {
    ConversationData data;
    data.conversation = conversation(conversationId);
    data.messages = messages(conversationId);
    return data;
}

namespace {

// Ids unique, every parent before its child, the active leaf a message.
void checkTree(const ConversationData& data) {
    if (data.messages.size() > kImportMaxMessages)
        throw Error("import",
                    std::to_string(data.messages.size()) + " messages, more than the limit of " +
                        std::to_string(kImportMaxMessages));
    std::unordered_set<int64_t> seen;
    seen.reserve(data.messages.size());
    for (const Message& m : data.messages) {
        if (m.parentId && !seen.count(*m.parentId))
            throw Error("import",
                        "message " + std::to_string(m.id) + ": parent " + std::to_string(*m.parentId) +
                            " is missing or comes after it");
        if (!seen.insert(m.id).second) throw Error("import", "message id " + std::to_string(m.id) + " appears twice");
    }
    if (data.conversation.activeLeafId && !seen.count(*data.conversation.activeLeafId))
        throw Error("import", "active leaf " + std::to_string(*data.conversation.activeLeafId) + " is not a message");
}

}  // namespace

int64_t Store::importConversation(const ConversationData& data, const ImportOptions& options) {
    const Conversation& c = data.conversation;
    if (!c.settings.is_object()) throw Error("import", "settings must be a JSON object");
    checkTree(data);
    int64_t conversationId = 0;
    {
        // Hidden (deleted at time 0) until complete: never listed, searched or
        // opened half-written, and purged at the next start after a crash.
        sql::Transaction tx(db_);
        sql::Statement ins(
            db_,
            "INSERT INTO conversations (title, model_path, model_fingerprint, system_prompt, "
            "settings_json, created_ms, updated_ms, pinned, deleted_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)");
        ins.bind(1, c.title).bind(2, c.modelPath).bind(3, c.modelFingerprint).bind(4, c.systemPrompt);
        ins.bind(5, c.settings.dump()).bind(6, c.createdMs).bind(7, c.updatedMs).bind(8, c.pinned).run();
        conversationId = db_.lastInsertRowid();
        tx.commit();
    }
    try {
        std::unordered_map<int64_t, int64_t> newId;  // id in the data -> id in the database
        newId.reserve(data.messages.size());
        sql::Statement msg(db_,
                           "INSERT INTO messages (conversation_id, parent_id, role, content, created_ms, "
                           "token_count, prefill_tokens, prefill_ms, decode_ms, complete, reasoning, reasoning_ms) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        const size_t batch = std::max<size_t>(options.batchMessages, 1);
        for (size_t start = 0; start < data.messages.size(); start += batch) {
            sql::Transaction tx(db_);
            const size_t end = std::min(data.messages.size(), start + batch);
            for (size_t i = start; i < end; ++i) {
                const Message& m = data.messages[i];
                std::optional<int64_t> parent;
                if (m.parentId) parent = newId.at(*m.parentId);
                msg.reset();
                msg.bind(1, conversationId).bind(2, parent).bind(3, roleName(m.role)).bind(4, m.content);
                msg.bind(5, m.createdMs).bind(6, m.stats.tokenCount).bind(7, m.stats.prefillTokens);
                msg.bind(8, m.stats.prefillMs).bind(9, m.stats.decodeMs).bind(10, m.complete);
                msg.bind(11, m.reasoning).bind(12, m.stats.reasoningMs).run();
                newId[m.id] = db_.lastInsertRowid();
            }
            tx.commit();
            if (options.progress && !options.progress(end)) throw Error("import", "cancelled");
        }
        sql::Transaction tx(db_);
        if (c.activeLeafId) {
            sql::Statement leaf(db_, "UPDATE conversations SET active_leaf_id = ? WHERE id = ?");
            leaf.bind(1, newId.at(*c.activeLeafId)).bind(2, conversationId).run();
        }
        sql::Statement shown(db_, "UPDATE conversations SET deleted_ms = NULL WHERE id = ?");
        shown.bind(1, conversationId).run();
        tx.commit();
    } catch (...) {
        try {
            purgeConversation(conversationId);
        } catch (const std::exception&) {
            // The hidden rows stay for purgeDeletedBefore; the first error is the one to report.
        }
        throw;
    }
    return conversationId;
}

std::string Store::unusedTitle(const std::string& title) {
    sql::Statement s(db_, "SELECT 1 FROM conversations WHERE title = ? AND deleted_ms IS NULL LIMIT 1");
    auto taken = [&](const std::string& t) {
        s.reset();
        s.bind(1, t);
        return s.step();
    };
    if (!taken(title)) return title;
    for (int n = 1;; ++n) {
        std::string candidate = title + (n == 1 ? " (imported)" : " (imported " + std::to_string(n) + ")");
        if (!taken(candidate)) return candidate;
    }
}

}  // namespace cairn::store
