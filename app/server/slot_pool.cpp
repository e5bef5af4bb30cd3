#include "slot_pool.h"

#include <algorithm>

namespace cairn::server {
namespace {

size_t sharedPrefix(std::span<const int32_t> a, std::span<const int32_t> b) {
    return size_t(std::mismatch(a.begin(), a.begin() + std::ptrdiff_t(std::min(a.size(), b.size())), b.begin()).first -
                  a.begin());
}

}  // namespace

SlotPool::SlotPool(const Model& model, SessionOptions options, int slots)
    : model_(model), options_(options), capacity_(size_t(std::max(1, slots))) {}

template <class SharedPrefix>
ChatSession& SlotPool::pick(SharedPrefix shared) {
    Slot* best = nullptr;
    size_t bestShared = 0;
    for (auto& s : slots_) {
        const size_t n = shared(*s.chat);
        if (n > bestShared) best = &s, bestShared = n;
    }
    if (!best && slots_.size() < capacity_) {
        slots_.push_back({std::make_unique<ChatSession>(model_, options_), 0});
        best = &slots_.back();
    }
    if (!best)
        best = &*std::min_element(slots_.begin(), slots_.end(),
                                  [](const Slot& a, const Slot& b) { return a.lastUse < b.lastUse; });
    best->lastUse = ++clock_;
    return *best->chat;
}

ChatSession& SlotPool::forChat(const std::vector<ChatMessage>& messages) {
    return pick([&](const ChatSession& chat) {
        return sharedPrefix(chat.session().tokens(), chat.promptTokens(messages, true));
    });
}

ChatSession& SlotPool::forTokens(std::span<const int32_t> tokens) {
    return pick([&](const ChatSession& chat) { return sharedPrefix(chat.session().tokens(), tokens); });
}

}  // namespace cairn::server
