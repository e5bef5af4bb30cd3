// Store: opening, conversations and their settings.
#include "cairn/store/store.h"

#include "cairn/error.h"
#include "cairn/store/schema.h"
#include "rows.h"

#include <chrono>

namespace cairn::store {

namespace rows {

Conversation readConversation(const sql::Statement& s) {
    Conversation c;
    c.id = s.columnInt64(0);
    c.title = s.columnText(1);
    c.modelPath = s.columnText(2);
    c.modelFingerprint = s.columnText(3);
    c.systemPrompt = s.columnText(4);
    // Written only through setSettings, so it parses; a hand-edited file that
    // does not still opens, with default settings.
    c.settings = nlohmann::json::parse(s.columnText(5), nullptr, false);
    if (!c.settings.is_object()) c.settings = nlohmann::json::object();
    c.createdMs = s.columnInt64(6);
    c.updatedMs = s.columnInt64(7);
    c.pinned = s.columnInt64(8) != 0;
    c.activeLeafId = s.columnOptInt64(9);
    c.deletedMs = s.columnOptInt64(10);
    return c;
}

}  // namespace rows

namespace {

std::string sqlConversation(const char* tail) {
    return std::string("SELECT ") + rows::kConversationColumns + " FROM conversations " + tail;
}

}  // namespace

Store::Store(const std::string& path, StoreOptions options)
    : db_(sql::Database::open(path, options.open)), budget_(options.snapshotBudgetBytes),
      clock_(std::move(options.clock)) {
    migrate(db_);
}

int64_t Store::now() const {
    if (clock_) return clock_();
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void Store::requireChanged(const char* what, int64_t id) {
    if (db_.changes() == 0) throw Error("store", std::string("no ") + what + " " + std::to_string(id));
}

int64_t Store::createConversation(const std::string& title, const std::string& modelPath,
                                  const std::string& modelFingerprint, const std::string& systemPrompt) {
    sql::Statement s(db_,
                     "INSERT INTO conversations (title, model_path, model_fingerprint, system_prompt, "
                     "created_ms, updated_ms) VALUES (:title, :path, :fp, :system, :now, :now)");
    s.bind(":title", title).bind(":path", modelPath).bind(":fp", modelFingerprint);
    s.bind(":system", systemPrompt).bind(":now", now()).run();
    return db_.lastInsertRowid();
}

Conversation Store::conversation(int64_t id) const {
    sql::Statement s(db_, sqlConversation("WHERE id = ?"));
    s.bind(1, id);
    if (!s.step()) throw Error("store", "no conversation " + std::to_string(id));
    return rows::readConversation(s);
}

std::vector<Conversation> Store::listConversations() {
    sql::Statement s(db_, sqlConversation("WHERE deleted_ms IS NULL ORDER BY pinned DESC, updated_ms DESC, id DESC"));
    std::vector<Conversation> out;
    while (s.step()) out.push_back(rows::readConversation(s));
    return out;
}

std::vector<Conversation> Store::deletedConversations() {
    sql::Statement s(db_, sqlConversation("WHERE deleted_ms IS NOT NULL ORDER BY deleted_ms DESC, id DESC"));
    std::vector<Conversation> out;
    while (s.step()) out.push_back(rows::readConversation(s));
    return out;
}

void Store::renameConversation(int64_t id, const std::string& title) {
    sql::Statement s(db_, "UPDATE conversations SET title = ?, updated_ms = ? WHERE id = ?");
    s.bind(1, title).bind(2, now()).bind(3, id).run();
    requireChanged("conversation", id);
}

void Store::setPinned(int64_t id, bool pinned) {
    // Pinning is not an edit: updated_ms (the sidebar's date) stays.
    sql::Statement s(db_, "UPDATE conversations SET pinned = ? WHERE id = ?");
    s.bind(1, pinned).bind(2, id).run();
    requireChanged("conversation", id);
}

void Store::setSystemPrompt(int64_t id, const std::string& systemPrompt) {
    sql::Statement s(db_, "UPDATE conversations SET system_prompt = ?, updated_ms = ? WHERE id = ?");
    s.bind(1, systemPrompt).bind(2, now()).bind(3, id).run();
    requireChanged("conversation", id);
}

void Store::setModel(int64_t id, const std::string& modelPath, const std::string& modelFingerprint) {
    sql::Statement s(db_, "UPDATE conversations SET model_path = ?, model_fingerprint = ? WHERE id = ?");
    s.bind(1, modelPath).bind(2, modelFingerprint).bind(3, id).run();
    requireChanged("conversation", id);
}

void Store::setSettings(int64_t id, const nlohmann::json& settings) {
    if (!settings.is_object()) throw Error("store", "conversation settings must be a JSON object");
    sql::Statement s(db_, "UPDATE conversations SET settings_json = ? WHERE id = ?");
    s.bind(1, settings.dump()).bind(2, id).run();
    requireChanged("conversation", id);
}

nlohmann::json Store::settings(int64_t id) const { return conversation(id).settings; }

void Store::deleteConversation(int64_t id) {
    sql::Statement s(db_, "UPDATE conversations SET deleted_ms = ? WHERE id = ?");
    s.bind(1, now()).bind(2, id).run();
    requireChanged("conversation", id);
}

void Store::restoreConversation(int64_t id) {
    sql::Statement s(db_, "UPDATE conversations SET deleted_ms = NULL WHERE id = ?");
    s.bind(1, id).run();
    requireChanged("conversation", id);
}

namespace {

// Deletes a conversation's messages newest first, a few per statement. A
// child always has a larger id than its parent, so each statement's cascades
// stay inside it: one cascade down a long chain would pass SQLite's trigger
// depth limit (1000 levels) and fail the whole delete.
void deleteMessagesNewestFirst(sql::Database& db, int64_t conversationId) {
    sql::Statement s(db,
                     "DELETE FROM messages WHERE id IN "
                     "(SELECT id FROM messages WHERE conversation_id = ? ORDER BY id DESC LIMIT 200)");
    do {
        s.reset();
        s.bind(1, conversationId).run();
    } while (db.changes() > 0);
}

}  // namespace

void Store::purgeConversation(int64_t id) {
    // Their FTS rows go by triggers, snapshots by cascade.
    sql::Transaction tx(db_);
    deleteMessagesNewestFirst(db_, id);
    sql::Statement s(db_, "DELETE FROM conversations WHERE id = ?");
    s.bind(1, id).run();
    requireChanged("conversation", id);
    tx.commit();
}

int Store::purgeDeletedBefore(int64_t cutoffMs) {
    std::vector<int64_t> ids;
    {
        sql::Statement s(db_, "SELECT id FROM conversations WHERE deleted_ms IS NOT NULL AND deleted_ms <= ?");
        s.bind(1, cutoffMs);
        while (s.step()) ids.push_back(s.columnInt64(0));
    }
    for (int64_t id : ids) purgeConversation(id);
    return static_cast<int>(ids.size());
}

}  // namespace cairn::store
