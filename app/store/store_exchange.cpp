// Store: reading a whole conversation out and inserting one (export / import).
#include "cairn/error.h"
#include "cairn/store/store.h"

#include <unordered_map>

namespace cairn::store {

ConversationData Store::conversationData(int64_t conversationId) {
    ConversationData data;
    data.conversation = conversation(conversationId);
    data.messages = messages(conversationId);
    return data;
}

int64_t Store::importConversation(const ConversationData& data) {
    const Conversation& c = data.conversation;
    if (!c.settings.is_object()) throw Error("import", "settings must be a JSON object");
    sql::Transaction tx(db_);
    sql::Statement ins(db_,
                       "INSERT INTO conversations (title, model_path, model_fingerprint, system_prompt, "
                       "settings_json, created_ms, updated_ms, pinned) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    ins.bind(1, c.title).bind(2, c.modelPath).bind(3, c.modelFingerprint).bind(4, c.systemPrompt);
    ins.bind(5, c.settings.dump()).bind(6, c.createdMs).bind(7, c.updatedMs).bind(8, c.pinned).run();
    const int64_t conversationId = db_.lastInsertRowid();

    std::unordered_map<int64_t, int64_t> newId;  // id in the data -> id in the database
    sql::Statement msg(db_,
                       "INSERT INTO messages (conversation_id, parent_id, role, content, created_ms, "
                       "token_count, prefill_tokens, prefill_ms, decode_ms, complete) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const Message& m : data.messages) {
        if (newId.count(m.id))
            throw Error("import", "message id " + std::to_string(m.id) + " appears twice");
        std::optional<int64_t> parent;
        if (m.parentId) {
            auto it = newId.find(*m.parentId);
            if (it == newId.end())
                throw Error("import", "message " + std::to_string(m.id) + ": parent " +
                                          std::to_string(*m.parentId) + " is missing or comes after it");
            parent = it->second;
        }
        msg.reset();
        msg.bind(1, conversationId).bind(2, parent).bind(3, roleName(m.role)).bind(4, m.content);
        msg.bind(5, m.createdMs).bind(6, m.stats.tokenCount).bind(7, m.stats.prefillTokens);
        msg.bind(8, m.stats.prefillMs).bind(9, m.stats.decodeMs).bind(10, m.complete).run();
        newId[m.id] = db_.lastInsertRowid();
    }
    if (c.activeLeafId) {
        auto it = newId.find(*c.activeLeafId);
        if (it == newId.end())
            throw Error("import", "active leaf " + std::to_string(*c.activeLeafId) + " is not a message");
        sql::Statement leaf(db_, "UPDATE conversations SET active_leaf_id = ? WHERE id = ?");
        leaf.bind(1, it->second).bind(2, conversationId).run();
    }
    tx.commit();
    return conversationId;
}

} // namespace cairn::store
