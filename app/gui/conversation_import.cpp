#include "conversation_import.h"

#include "cairn/store/exchange.h"
#include "cairn/store/store.h"

namespace cairn::app {

ImportOutcome importConversationFile(const QString& databasePath, const QString& file,
                                     const std::atomic<bool>& cancel) {
    ImportOutcome out;
    try {
        store::ConversationData data = store::fromJsonFile(file.toStdString());
        store::Store db(databasePath.toStdString());
        out.fileTitle = QString::fromStdString(data.conversation.title);
        data.conversation.title = db.unusedTitle(data.conversation.title);
        out.title = QString::fromStdString(data.conversation.title);
        store::Store::ImportOptions options;
        options.progress = [&cancel](size_t) { return !cancel.load(); };
        out.conversationId = db.importConversation(data, options);
    } catch (const std::exception& e) {
        out.conversationId = -1;
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

}  // namespace cairn::app
