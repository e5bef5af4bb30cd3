// The embedded engine as a backend: a turn on a ChatSession the caller owns
// (prefix reuse, checkpoints and snapshots stay the session's business).
#pragma once

#include "assistant_backend.h"

namespace cairn {
class ChatSession;
class ExecContext;
}  // namespace cairn

namespace cairn::backend {

class EmbeddedBackend : public AssistantBackend {
public:
    EmbeddedBackend(ChatSession& session, ExecContext& exec) : session_(session), exec_(exec) {}
    TurnResult reply(const TurnRequest& request) override;
    bool isRemote() const override { return false; }

private:
    ChatSession& session_;
    ExecContext& exec_;
};

}  // namespace cairn::backend
