// The conversation store the app uses: conversations, the message tree,
// full-text search and engine snapshots, in one SQLite file.
//
// Threads: a Store owns one connection and belongs to the thread that uses it
// (the app's engine worker). Another thread that needs the database opens its
// own Store on the same file; WAL mode lets it read while this one writes.
//
// Every mutating call commits before it returns (a user message is durable
// before generation starts). Unknown ids give cairn::Error.
#pragma once

#include "cairn/store/records.h"
#include "cairn/store/sqlite.h"

#include <functional>
#include <span>

namespace cairn::store {

struct StoreOptions {
    sql::OpenOptions open;
    uint64_t snapshotBudgetBytes = 2ull * 1024 * 1024 * 1024;  // 2 GiB
    std::function<int64_t()> clock;  // ms since epoch; default: system clock
};

class Store {
public:
    // Opens (creating when missing) and migrates to the latest schema.
    explicit Store(const std::string& path, StoreOptions options = {});

    sql::Database& database() { return db_; }
    int64_t now() const;

    // ---- conversations
    int64_t createConversation(const std::string& title, const std::string& modelPath = {},
                               const std::string& modelFingerprint = {}, const std::string& systemPrompt = {});
    Conversation conversation(int64_t id) const;
    // Not deleted; pinned first, then most recently updated.
    std::vector<Conversation> listConversations();
    void renameConversation(int64_t id, const std::string& title);
    void setPinned(int64_t id, bool pinned);
    void setSystemPrompt(int64_t id, const std::string& systemPrompt);
    void setModel(int64_t id, const std::string& modelPath, const std::string& modelFingerprint);
    // Per-chat settings: a JSON object (anything else is refused).
    void setSettings(int64_t id, const nlohmann::json& settings);
    nlohmann::json settings(int64_t id) const;

    // Delete is undoable: deleteConversation hides it (messages, snapshots
    // stay), restoreConversation brings it back, purge removes it for good.
    void deleteConversation(int64_t id);
    void restoreConversation(int64_t id);
    void purgeConversation(int64_t id);
    // Purges every conversation deleted at or before `cutoffMs`; returns how many.
    int purgeDeletedBefore(int64_t cutoffMs);
    std::vector<Conversation> deletedConversations();

    // ---- messages (a tree per conversation)
    // Adds a message under `parentId` (nullopt: a new root) and makes it the
    // active leaf. Committed when this returns.
    int64_t addMessage(int64_t conversationId, std::optional<int64_t> parentId, Role role, const std::string& content,
                       bool complete = true);
    // Streaming: store the text so far (complete = 0); `reasoning` as Message::reasoning.
    void updatePartial(int64_t messageId, const std::string& content, const std::string& reasoning = {});
    // The reply is done: final text, reasoning and figures, complete = 1.
    void finishMessage(int64_t messageId, const std::string& content, const MessageStats& stats,
                       const std::string& reasoning = {});
    // Replaces the text (keeps the complete flag and stats).
    void setMessageContent(int64_t messageId, const std::string& content);
    // Deletes a message with its whole subtree (and their snapshots).
    void deleteMessage(int64_t messageId);

    Message message(int64_t messageId);
    std::vector<Message> messages(int64_t conversationId) const;  // parents before children
    std::vector<Message> children(std::optional<int64_t> parentId, int64_t conversationId);
    std::vector<Message> pathTo(int64_t messageId);  // root first, ends at messageId
    Siblings siblings(int64_t messageId);
    // The leaf reached from `messageId` by always taking the newest child.
    int64_t newestLeafUnder(int64_t messageId);

    // The stored active leaf, or (when unset) the newest message; nullopt for
    // an empty conversation.
    std::optional<int64_t> activeLeaf(int64_t conversationId);
    void setActiveLeaf(int64_t conversationId, int64_t messageId);

    // ---- search: words of `text` must all occur (the last one as a prefix);
    // FTS syntax in the input is taken literally. Best matches first;
    // deleted conversations are left out. The snippet marks hits with
    // `open`/`close`.
    std::vector<SearchHit> search(const std::string& text, int limit = 50, const std::string& open = "[",
                                  const std::string& close = "]");

    // ---- snapshots
    // Stores (or replaces) the snapshot for (message, fingerprint), then evicts
    // least-recently-used snapshots until the total fits the budget. A blob
    // larger than the whole budget is not stored: returns nullopt.
    std::optional<int64_t> putSnapshot(std::span<const uint8_t> blob, int64_t conversationId, int64_t messageId,
                                       const std::string& modelFingerprint, int64_t tokenCount);
    // The snapshot for the message deepest along `path` (root first) with this
    // fingerprint, if any.
    std::optional<SnapshotInfo> bestSnapshot(int64_t conversationId, std::span<const int64_t> path,
                                             const std::string& modelFingerprint);
    std::optional<SnapshotInfo> snapshotInfo(int64_t snapshotId);
    std::vector<SnapshotInfo> snapshots(int64_t conversationId);
    std::vector<uint8_t> snapshotData(int64_t snapshotId);
    void touchSnapshot(int64_t snapshotId);
    // For a blob the engine refused (damaged, wrong version): removes only the
    // snapshot row; messages are never touched.
    void deleteSnapshot(int64_t snapshotId);
    int64_t snapshotBytes();
    uint64_t snapshotBudget() const { return budget_; }
    void setSnapshotBudget(uint64_t bytes);  // evicts at once when over
    // Evicts least recently used snapshots until the total is <= budget;
    // `keep` is never evicted. Returns how many were removed.
    int evictSnapshots(std::optional<int64_t> keep = std::nullopt);

    // ---- export / import (see exchange.h for the file formats)
    ConversationData conversationData(int64_t conversationId);
    struct ImportOptions {
        // Messages per transaction: the write lock is never held for the
        // whole of a large import, so the engine's writes go on meanwhile.
        size_t batchMessages = 1000;
        // Called after each batch with the messages written so far; false
        // cancels (the partial conversation is removed, cairn::Error thrown).
        std::function<bool(size_t written)> progress;
    };
    // Inserts as a new conversation (fresh ids; nothing existing is touched)
    // and returns its id. The whole tree is checked before anything is
    // written; until the last batch is in, the conversation is hidden like a
    // deleted one (a crash leaves it to purgeDeletedBefore) and any failure
    // removes it.
    int64_t importConversation(const ConversationData& data, const ImportOptions& options);
    int64_t importConversation(const ConversationData& data) { return importConversation(data, ImportOptions{}); }
    // `title` when no conversation (not deleted) has it, else "title (imported)",
    // "title (imported 2)", ...
    std::string unusedTitle(const std::string& title);

private:
    void requireChanged(const char* what, int64_t id);

    // Reads prepare statements on the connection without changing what the store holds.
    mutable sql::Database db_;
    uint64_t budget_;
    std::function<int64_t()> clock_;
};

}  // namespace cairn::store
