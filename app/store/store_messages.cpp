// Store: the message tree.
#include "cairn/error.h"
#include "cairn/store/store.h"
#include "rows.h"

namespace cairn::store {

namespace rows {

Message readMessage(const sql::Statement& s) {
    Message m;
    m.id = s.columnInt64(0);
    m.conversationId = s.columnInt64(1);
    m.parentId = s.columnOptInt64(2);
    m.role = roleFromName(s.columnText(3));
    m.content = s.columnText(4);
    m.createdMs = s.columnInt64(5);
    m.stats.tokenCount = s.columnInt64(6);
    m.stats.prefillTokens = s.columnInt64(7);
    m.stats.prefillMs = s.columnDouble(8);
    m.stats.decodeMs = s.columnDouble(9);
    m.complete = s.columnInt64(10) != 0;
    m.reasoning = s.columnText(11);
    m.stats.reasoningMs = std::max<int64_t>(0, s.columnInt64(12));  // another version's file is not trusted
    return m;
}

}  // namespace rows

namespace {

std::string sqlMessages(const char* tail) {
    return std::string("SELECT ") + rows::kMessageColumns + " FROM messages " + tail;
}

std::vector<Message> readAll(sql::Statement& s) {
    std::vector<Message> out;
    while (s.step()) out.push_back(rows::readMessage(s));
    return out;
}

}  // namespace

int64_t Store::addMessage(int64_t conversationId, std::optional<int64_t> parentId, Role role,
                          const std::string& content, bool complete) {
    sql::Transaction tx(db_);
    if (parentId) {
        sql::Statement p(db_, "SELECT conversation_id FROM messages WHERE id = ?");
        p.bind(1, *parentId);
        if (!p.step() || p.columnInt64(0) != conversationId)
            throw Error("store",
                        "message " + std::to_string(*parentId) + " is not in conversation " +
                            std::to_string(conversationId));
    }
    const int64_t t = now();
    sql::Statement s(db_,
                     "INSERT INTO messages (conversation_id, parent_id, role, content, created_ms, complete) "
                     "VALUES (?, ?, ?, ?, ?, ?)");
    s.bind(1, conversationId).bind(2, parentId).bind(3, roleName(role)).bind(4, content);
    s.bind(5, t).bind(6, complete).run();
    const int64_t id = db_.lastInsertRowid();
    sql::Statement c(db_, "UPDATE conversations SET updated_ms = ?, active_leaf_id = ? WHERE id = ?");
    c.bind(1, t).bind(2, id).bind(3, conversationId).run();
    tx.commit();
    return id;
}

void Store::updatePartial(int64_t messageId, const std::string& content, const std::string& reasoning) {
    sql::Statement s(db_, "UPDATE messages SET content = ?, reasoning = ?, complete = 0 WHERE id = ?");
    s.bind(1, content).bind(2, reasoning).bind(3, messageId).run();
    requireChanged("message", messageId);
}

void Store::finishMessage(int64_t messageId, const std::string& content, const MessageStats& stats,
                          const std::string& reasoning) {
    sql::Transaction tx(db_);
    sql::Statement s(db_,
                     "UPDATE messages SET content = ?, token_count = ?, prefill_tokens = ?, "
                     "prefill_ms = ?, decode_ms = ?, reasoning = ?, reasoning_ms = ?, complete = 1 WHERE id = ?");
    s.bind(1, content).bind(2, stats.tokenCount).bind(3, stats.prefillTokens);
    s.bind(4, stats.prefillMs).bind(5, stats.decodeMs).bind(6, reasoning).bind(7, stats.reasoningMs);
    s.bind(8, messageId).run();
    requireChanged("message", messageId);
    sql::Statement c(db_,
                     "UPDATE conversations SET updated_ms = ? "
                     "WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)");
    c.bind(1, now()).bind(2, messageId).run();
    tx.commit();
}

void Store::setMessageContent(int64_t messageId, const std::string& content) {
    sql::Statement s(db_, "UPDATE messages SET content = ? WHERE id = ?");
    s.bind(1, content).bind(2, messageId).run();
    requireChanged("message", messageId);
}

void Store::deleteMessage(int64_t messageId) {
    // The subtree goes by the (conversation_id, parent_id) cascade, snapshots by
    // theirs, and an active leaf inside it falls back to "newest" (SET NULL).
    sql::Statement s(db_, "DELETE FROM messages WHERE id = ?");
    s.bind(1, messageId).run();
    requireChanged("message", messageId);
}

Message Store::message(int64_t messageId) {
    sql::Statement s(db_, sqlMessages("WHERE id = ?"));
    s.bind(1, messageId);
    if (!s.step()) throw Error("store", "no message " + std::to_string(messageId));
    return rows::readMessage(s);
}

std::vector<Message> Store::messages(int64_t conversationId) const {
    // Ids grow with insertion and a parent exists before its children.
    sql::Statement s(db_, sqlMessages("WHERE conversation_id = ? ORDER BY id"));
    s.bind(1, conversationId);
    return readAll(s);
}

std::vector<Message> Store::children(std::optional<int64_t> parentId, int64_t conversationId) {
    sql::Statement s(db_, sqlMessages("WHERE conversation_id = ? AND parent_id IS ? ORDER BY id"));
    s.bind(1, conversationId).bind(2, parentId);
    return readAll(s);
}

std::vector<Message> Store::pathTo(int64_t messageId) {
    sql::Statement s(db_,
                     std::string("WITH RECURSIVE chain (mid, depth) AS ("
                                 "  SELECT id, 0 FROM messages WHERE id = ?"
                                 "  UNION ALL"
                                 "  SELECT m.parent_id, c.depth + 1 FROM messages m JOIN chain c ON m.id = c.mid"
                                 "  WHERE m.parent_id IS NOT NULL"
                                 ") SELECT ") +
                         rows::kMessageColumns +
                         " FROM messages JOIN chain ON chain.mid = messages.id ORDER BY chain.depth DESC");
    s.bind(1, messageId);
    auto path = readAll(s);
    if (path.empty()) throw Error("store", "no message " + std::to_string(messageId));
    return path;
}

Siblings Store::siblings(int64_t messageId) {
    const Message m = message(messageId);
    sql::Statement s(db_, "SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id");
    s.bind(1, m.conversationId).bind(2, m.parentId);
    Siblings out;
    while (s.step()) {
        if (s.columnInt64(0) == messageId) out.index = out.ids.size();
        out.ids.push_back(s.columnInt64(0));
    }
    return out;
}

int64_t Store::newestLeafUnder(int64_t messageId) {
    const int64_t conversationId = message(messageId).conversationId;
    sql::Statement s(db_, "SELECT max(id) FROM messages WHERE conversation_id = ? AND parent_id = ?");
    int64_t at = messageId;
    for (;;) {
        s.reset();
        s.bind(1, conversationId).bind(2, at);
        if (!s.step() || s.isNull(0)) return at;
        at = s.columnInt64(0);
    }
}

std::optional<int64_t> Store::activeLeaf(int64_t conversationId) {
    if (auto leaf = conversation(conversationId).activeLeafId) return leaf;
    sql::Statement s(db_, "SELECT max(id) FROM messages WHERE conversation_id = ?");
    s.bind(1, conversationId);
    s.step();
    return s.columnOptInt64(0);
}

void Store::setActiveLeaf(int64_t conversationId, int64_t messageId) {
    sql::Statement s(db_,
                     "UPDATE conversations SET active_leaf_id = ?1 WHERE id = ?2 AND EXISTS "
                     "(SELECT 1 FROM messages WHERE id = ?1 AND conversation_id = ?2)");
    s.bind(1, messageId).bind(2, conversationId).run();
    if (db_.changes() == 0)
        throw Error("store",
                    "message " + std::to_string(messageId) + " is not in conversation " +
                        std::to_string(conversationId));
}

}  // namespace cairn::store
