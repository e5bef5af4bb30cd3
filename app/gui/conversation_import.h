// Importing a conversation file off the UI thread: its own store connection,
// the limits of cairn/store/exchange.h, bounded transactions, and a title that
// says it is a copy when one with the same name exists.
#pragma once

#include <QString>

#include <atomic>

namespace cairn::app {

struct ImportOutcome {
    qint64 conversationId = -1;  // -1 when it failed
    QString title;  // as stored
    QString fileTitle;  // as in the file (differs when that one was taken)
    QString error;  // one line, empty on success
};

// Blocks until done; run it on a worker thread. `cancel` (checked between
// batches) ends it with nothing stored.
ImportOutcome importConversationFile(const QString& databasePath, const QString& file, const std::atomic<bool>& cancel);

}  // namespace cairn::app
