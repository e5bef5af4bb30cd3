// Store: full-text search over message content (FTS5, see schema version 2).
#include "cairn/store/store.h"

namespace cairn::store {
namespace {

// Turns what the user typed into an FTS5 query: every word must occur, the
// last one as a prefix (search as you type). Each word is quoted, so FTS
// operators and quotes in the input are plain text and never a syntax error.
std::string ftsQuery(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    for (char ch : text) {
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
        } else {
            word += ch;
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    std::string query;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i) query += ' ';
        query += '"';
        for (char ch : words[i]) {
            if (ch == '"') query += '"';
            query += ch;
        }
        query += '"';
        if (i + 1 == words.size()) query += '*';
    }
    return query;
}

}  // namespace

std::vector<SearchHit> Store::search(const std::string& text, int limit, const std::string& open,
                                     const std::string& close) {
    std::vector<SearchHit> hits;
    const std::string query = ftsQuery(text);
    if (query.empty() || limit <= 0) return hits;
    sql::Statement s(db_,
                     "SELECT m.conversation_id, m.id, "
                     "       snippet(messages_fts, 0, :open, :close, '…', 12) "
                     "FROM messages_fts "
                     "JOIN messages m ON m.id = messages_fts.rowid "
                     "JOIN conversations c ON c.id = m.conversation_id "
                     "WHERE messages_fts MATCH :query AND c.deleted_ms IS NULL "
                     "ORDER BY rank, m.id DESC LIMIT :limit");
    s.bind(":open", open).bind(":close", close).bind(":query", query).bind(":limit", limit);
    while (s.step()) hits.push_back({s.columnInt64(0), s.columnInt64(1), s.columnText(2)});
    return hits;
}

}  // namespace cairn::store
