#include "cairn/store/schema.h"

#include "cairn/error.h"

#include <string>

namespace cairn::store {
namespace {

// Version 1: conversations, the message tree and snapshots.
// Times are milliseconds since the Unix epoch (UTC).
const char* kV1 = R"SQL(
CREATE TABLE conversations (
    id                INTEGER PRIMARY KEY,
    title             TEXT    NOT NULL DEFAULT '',
    model_path        TEXT    NOT NULL DEFAULT '',
    model_fingerprint TEXT    NOT NULL DEFAULT '',
    system_prompt     TEXT    NOT NULL DEFAULT '',
    settings_json     TEXT    NOT NULL DEFAULT '{}',
    created_ms        INTEGER NOT NULL,
    updated_ms        INTEGER NOT NULL,
    pinned            INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1))
);
CREATE INDEX conversations_by_order ON conversations (pinned DESC, updated_ms DESC);

-- A tree: a root has parent_id NULL; siblings share a parent and are ordered
-- by id (insertion order). The composite foreign key keeps a parent inside
-- the same conversation.
CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    parent_id       INTEGER,
    role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT    NOT NULL DEFAULT '',
    created_ms      INTEGER NOT NULL,
    token_count     INTEGER NOT NULL DEFAULT 0,
    prefill_tokens  INTEGER NOT NULL DEFAULT 0,
    prefill_ms      REAL    NOT NULL DEFAULT 0,
    decode_ms       REAL    NOT NULL DEFAULT 0,
    complete        INTEGER NOT NULL DEFAULT 1 CHECK (complete IN (0, 1)),
    UNIQUE (conversation_id, id),
    FOREIGN KEY (conversation_id, parent_id) REFERENCES messages (conversation_id, id) ON DELETE CASCADE
);
CREATE INDEX messages_by_parent ON messages (conversation_id, parent_id, id);

-- The blob is the last column so reading the metadata never touches its
-- overflow pages.
CREATE TABLE snapshots (
    id                INTEGER PRIMARY KEY,
    conversation_id   INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    message_id        INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    model_fingerprint TEXT    NOT NULL,
    token_count       INTEGER NOT NULL,
    size_bytes        INTEGER NOT NULL,
    created_ms        INTEGER NOT NULL,
    last_used_ms      INTEGER NOT NULL,
    data              BLOB    NOT NULL,
    UNIQUE (message_id, model_fingerprint)
);
CREATE INDEX snapshots_by_lru ON snapshots (last_used_ms, id);
CREATE INDEX snapshots_by_conversation ON snapshots (conversation_id, model_fingerprint);
)SQL";

// Version 2: full-text search over message content. An external-content FTS5
// table (the text lives once, in messages) kept in sync by triggers, and
// filled from the messages that already exist.
const char* kV2 = R"SQL(
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
)SQL";

// Version 3: soft delete (undoable until purged) and the branch the user is
// looking at. Existing conversations get the newest message as active leaf.
const char* kV3 = R"SQL(
ALTER TABLE conversations ADD COLUMN deleted_ms INTEGER;
ALTER TABLE conversations ADD COLUMN active_leaf_id INTEGER REFERENCES messages (id) ON DELETE SET NULL;
UPDATE conversations SET active_leaf_id =
    (SELECT max(m.id) FROM messages m WHERE m.conversation_id = conversations.id);
)SQL";

// Version 4: a reasoning model's reasoning, apart from the answer (so search,
// titles and export see the answer only), and how long it took.
const char* kV4 = R"SQL(
ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN reasoning_ms INTEGER NOT NULL DEFAULT 0;
)SQL";

}  // namespace

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> list = {
        {1, "conversations, message tree, snapshots", kV1},
        {2, "full-text index over message content", kV2},
        {3, "soft delete and active leaf per conversation", kV3},
        {4, "reasoning apart from the answer", kV4},
    };
    return list;
}

int latestSchemaVersion() { return migrations().back().version; }

int migrate(sql::Database& db, int targetVersion) {
    const int latest = latestSchemaVersion();
    if (targetVersion < 0) targetVersion = latest;
    if (targetVersion > latest) throw Error("store", "no schema version " + std::to_string(targetVersion));
    int current = db.userVersion();
    if (current > latest)
        throw Error("store",
                    db.path() + " has schema version " + std::to_string(current) +
                        ", newer than this Cairn understands (" + std::to_string(latest) + ")");
    for (const Migration& m : migrations()) {
        if (m.version <= current || m.version > targetVersion) continue;
        sql::Transaction tx(db);
        // Re-read inside the write lock: another connection may have migrated.
        if (db.userVersion() >= m.version) continue;
        db.exec(m.sql);
        db.setUserVersion(m.version);
        tx.commit();
        current = m.version;
    }
    return db.userVersion();
}

}  // namespace cairn::store
