// The server's slots: a few live sessions on the one loaded model, so that a
// request continuing (or sharing a long prefix with) an earlier one prefills
// only what is new — the same Session machinery as the app's chats, for
// attention and recurrent memory alike. Each slot holds its own memory (KV
// cache or recurrent state), so the count bounds memory. Not thread-safe:
// the server uses it under its engine lock.
#pragma once

#include "cairn/chat_session.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace cairn::server {

class SlotPool {
public:
    SlotPool(const Model& model, SessionOptions options, int slots);

    // The slot whose session shares the longest token prefix with what the
    // request would feed; the least recently used one when none shares any.
    // Slots are created on first use, up to the count.
    ChatSession& forChat(const std::vector<ChatMessage>& messages);
    ChatSession& forTokens(std::span<const int32_t> tokens);

    int64_t contextSize() const { return options_.memory.contextSize; }

private:
    struct Slot {
        std::unique_ptr<ChatSession> chat;
        uint64_t lastUse = 0;
    };
    template <class SharedPrefix>
    ChatSession& pick(SharedPrefix sharedPrefix);

    const Model& model_;
    SessionOptions options_;
    size_t capacity_;
    std::vector<Slot> slots_;
    uint64_t clock_ = 0;
};

}  // namespace cairn::server
