// Store: engine snapshots with a byte budget and least-recently-used eviction.
#include "cairn/error.h"
#include "cairn/store/store.h"
#include "rows.h"

#include <sqlite3.h>

#include <unordered_map>

namespace cairn::store {

namespace rows {

SnapshotInfo readSnapshot(const sql::Statement& s) {
    SnapshotInfo i;
    i.id = s.columnInt64(0);
    i.conversationId = s.columnInt64(1);
    i.messageId = s.columnInt64(2);
    i.modelFingerprint = s.columnText(3);
    i.tokenCount = s.columnInt64(4);
    i.sizeBytes = s.columnInt64(5);
    i.createdMs = s.columnInt64(6);
    i.lastUsedMs = s.columnInt64(7);
    return i;
}

}  // namespace rows

namespace {

// last_used_ms is the wall clock, bumped to stay strictly above every earlier
// stamp: LRU order is then the true order of use, even within one millisecond
// or when the system clock steps back.
constexpr const char* kUseStamp = "max(:now, coalesce((SELECT max(last_used_ms) FROM snapshots), 0) + 1)";

std::string sqlSnapshots(const char* tail) {
    return std::string("SELECT ") + rows::kSnapshotColumns + " FROM snapshots " + tail;
}

// Deletes least recently used snapshots (never `keep`) until the total fits.
int evict(sql::Database& db, uint64_t budget, std::optional<int64_t> keep) {
    sql::Statement total(db, "SELECT coalesce(sum(size_bytes), 0) FROM snapshots");
    total.step();
    int64_t bytes = total.columnInt64(0);
    if (bytes <= static_cast<int64_t>(budget)) return 0;
    std::vector<int64_t> victims;
    {
        sql::Statement lru(db, "SELECT id, size_bytes FROM snapshots WHERE id IS NOT ? ORDER BY last_used_ms, id");
        lru.bind(1, keep);
        while (bytes > static_cast<int64_t>(budget) && lru.step()) {
            victims.push_back(lru.columnInt64(0));
            bytes -= lru.columnInt64(1);
        }
    }
    sql::Statement del(db, "DELETE FROM snapshots WHERE id = ?");
    for (int64_t id : victims) {
        del.reset();
        del.bind(1, id).run();
    }
    return static_cast<int>(victims.size());
}

}  // namespace

std::optional<int64_t> Store::putSnapshot(std::span<const uint8_t> blob, int64_t conversationId, int64_t messageId,
                                          const std::string& modelFingerprint, int64_t tokenCount) {
    if (blob.size() > budget_) return std::nullopt;
    const auto limit = static_cast<uint64_t>(sqlite3_limit(db_.handle(), SQLITE_LIMIT_LENGTH, -1));
    if (blob.size() > limit)
        throw Error("store",
                    "snapshot of " + std::to_string(blob.size()) + " bytes exceeds the database's limit of " +
                        std::to_string(limit));
    sql::Transaction tx(db_);
    {
        sql::Statement p(db_, "SELECT conversation_id FROM messages WHERE id = ?");
        p.bind(1, messageId);
        if (!p.step() || p.columnInt64(0) != conversationId)
            throw Error("store",
                        "message " + std::to_string(messageId) + " is not in conversation " +
                            std::to_string(conversationId));
    }
    sql::Statement s(db_,
                     std::string("INSERT INTO snapshots (conversation_id, message_id, model_fingerprint, token_count, "
                                 "size_bytes, created_ms, last_used_ms, data) "
                                 "VALUES (:conv, :msg, :fp, :tokens, :size, :now, ") +
                         kUseStamp +
                         ", :data) "
                         "ON CONFLICT (message_id, model_fingerprint) DO UPDATE SET "
                         "token_count = excluded.token_count, size_bytes = excluded.size_bytes, "
                         "created_ms = excluded.created_ms, last_used_ms = excluded.last_used_ms, data = excluded.data "
                         "RETURNING id");
    s.bind(":conv", conversationId).bind(":msg", messageId).bind(":fp", modelFingerprint);
    s.bind(":tokens", tokenCount).bind(":size", static_cast<int64_t>(blob.size()));
    s.bind(":now", now()).bind(":data", sql::Blob(blob));
    if (!s.step()) throw Error("store", "snapshot insert returned no id");
    const int64_t id = s.columnInt64(0);
    s.run();  // finish the statement before the next one writes
    evict(db_, budget_, id);
    tx.commit();
    return id;
}

std::optional<SnapshotInfo> Store::bestSnapshot(int64_t conversationId, std::span<const int64_t> path,
                                                const std::string& modelFingerprint) {
    sql::Statement s(db_, sqlSnapshots("WHERE conversation_id = ? AND model_fingerprint = ?"));
    s.bind(1, conversationId).bind(2, modelFingerprint);
    std::unordered_map<int64_t, SnapshotInfo> byMessage;
    while (s.step()) {
        SnapshotInfo info = rows::readSnapshot(s);
        byMessage.emplace(info.messageId, std::move(info));
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
        if (auto found = byMessage.find(*it); found != byMessage.end()) return found->second;
    }
    return std::nullopt;
}

std::optional<SnapshotInfo> Store::snapshotInfo(int64_t snapshotId) {
    sql::Statement s(db_, sqlSnapshots("WHERE id = ?"));
    s.bind(1, snapshotId);
    if (!s.step()) return std::nullopt;
    return rows::readSnapshot(s);
}

std::vector<SnapshotInfo> Store::snapshots(int64_t conversationId) {
    sql::Statement s(db_, sqlSnapshots("WHERE conversation_id = ? ORDER BY id"));
    s.bind(1, conversationId);
    std::vector<SnapshotInfo> out;
    while (s.step()) out.push_back(rows::readSnapshot(s));
    return out;
}

std::vector<uint8_t> Store::snapshotData(int64_t snapshotId) {
    sql::Statement s(db_, "SELECT data FROM snapshots WHERE id = ?");
    s.bind(1, snapshotId);
    if (!s.step()) throw Error("store", "no snapshot " + std::to_string(snapshotId));
    return s.columnBlob(0);
}

void Store::touchSnapshot(int64_t snapshotId) {
    sql::Statement s(db_, std::string("UPDATE snapshots SET last_used_ms = ") + kUseStamp + " WHERE id = :id");
    s.bind(":now", now()).bind(":id", snapshotId).run();
    requireChanged("snapshot", snapshotId);
}

void Store::deleteSnapshot(int64_t snapshotId) {
    sql::Statement s(db_, "DELETE FROM snapshots WHERE id = ?");
    s.bind(1, snapshotId).run();
    requireChanged("snapshot", snapshotId);
}

int64_t Store::snapshotBytes() {
    sql::Statement s(db_, "SELECT coalesce(sum(size_bytes), 0) FROM snapshots");
    s.step();
    return s.columnInt64(0);
}

void Store::setSnapshotBudget(uint64_t bytes) {
    budget_ = bytes;
    evictSnapshots();
}

int Store::evictSnapshots(std::optional<int64_t> keep) {
    sql::Transaction tx(db_);
    const int n = evict(db_, budget_, keep);
    tx.commit();
    return n;
}

}  // namespace cairn::store
