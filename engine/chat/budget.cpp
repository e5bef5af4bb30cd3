#include "budget.h"

#include <algorithm>
#include <cstddef>

namespace cairn {

ChatRenderLimits::ChatRenderLimits()
    : maxSteps(chat::kDefaultMaxSteps), maxBytes(chat::kDefaultMaxBytes), maxDepth(chat::kDefaultMaxDepth) {}

}  // namespace cairn

namespace cairn::chat {
namespace {

thread_local Budget* t_current = nullptr;
thread_local uint64_t t_nextId = 0;

// How often (in steps) the cancellation flag is read.
constexpr uint64_t kCancelCheckSteps = 4096;

[[noreturn]] void exceeded(const std::string& what) { throw TemplateError("chat template", "exceeded the " + what); }

}  // namespace

Budget::Budget(const ChatRenderLimits& limits, const std::atomic<bool>* cancel)
    : limits_(limits), cancel_(cancel), id_(++t_nextId) {
    nextCheck_ = std::min<uint64_t>(kCancelCheckSteps, limits_.maxSteps + 1);
}

Budget* Budget::current() { return t_current; }

void Budget::checkSteps() {
    if (steps_ > limits_.maxSteps) exceeded("step budget (" + std::to_string(limits_.maxSteps) + " steps)");
    if (cancel_ && cancel_->load(std::memory_order_relaxed))
        throw TemplateCancelled("chat template", "rendering cancelled");
    nextCheck_ = std::min(steps_ + kCancelCheckSteps, limits_.maxSteps + 1);
}

void Budget::ensure(uint64_t bytes) const {
    if (bytes > limits_.maxBytes || alive_ > limits_.maxBytes - bytes)
        exceeded("memory budget (" + std::to_string(limits_.maxBytes >> 20) + " MiB)");
}

void Budget::charge(uint64_t bytes) {
    ensure(bytes);
    alive_ += bytes;
    if (alive_ > peak_) peak_ = alive_;
}

Budget::Active::Active(Budget& b) : previous_(t_current) {
    t_current = &b;
    b.stackBase_ = static_cast<const char*>(__builtin_frame_address(0));
}

Budget::Active::~Active() { t_current = previous_; }

Budget::Depth::Depth() : b_(t_current) {
    if (!b_) return;
    if (b_->depth_ >= b_->limits_.maxDepth) {
        b_ = nullptr;
        exceeded("depth limit (" + std::to_string(t_current->limits_.maxDepth) + " levels)");
    }
    if (++b_->depth_ > b_->peakDepth_) b_->peakDepth_ = b_->depth_;
    // The stack grows down on every platform we build for.
    const char* here = static_cast<const char*>(__builtin_frame_address(0));
    if (t_current->stackBase_ && t_current->stackBase_ - here > std::ptrdiff_t(kMaxStackBytes)) {
        --b_->depth_;
        b_ = nullptr;
        exceeded("stack budget (" + std::to_string(kMaxStackBytes >> 20) + " MiB)");
    }
}

void Charge::reset() noexcept {
    // Only the render that was charged is credited: a value that outlives it owes nothing.
    if (budget_ && bytes_ && t_current == budget_ && budget_->id() == id_) budget_->release(bytes_);
    bytes_ = 0;
}

}  // namespace cairn::chat
