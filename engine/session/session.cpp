#include "cairn/session.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "session/common_prefix.h"
#include "session/state_bytes.h"

#include <algorithm>

namespace cairn {

Session::Session(const Model& model, SessionOptions options)
    : model_(model), options_(options), memory_(model.newMemory(options.memory)) {
    options_.chunk = std::max<int64_t>(1, options_.chunk);
}

Session::~Session() = default;

void Session::reset() {
    // Emptied in place (a recurrent state is zeroed, the KV cache only forgets
    // its length): a new memory would fault in and zero every page again.
    memory_->truncate(0);
    tokens_.clear();
    logits_.clear();
    checkpoints_.clear();
}

void Session::feed(std::span<const int32_t> tokens, ExecContext& ctx, const FeedProgress& progress) {
    if (int64_t(tokens.size()) > memory_->capacity())
        throw Error("session",
                    "the conversation needs " + std::to_string(tokens.size()) + " tokens but the context holds " +
                        std::to_string(memory_->capacity()));
    if (tokens.empty()) {
        reset();
        return;
    }
    const size_t common = session::commonPrefix(tokens, tokens_);

    stats_.lastPrefilled = 0;
    if (common == tokens.size() && common == tokens_.size() && !logits_.empty()) {
        stats_.lastReused = int64_t(common);
        return;  // already there
    }
    // Checkpoints past the common prefix belong to the old branch.
    std::erase_if(checkpoints_, [&](const Checkpoint& c) { return c.position > int64_t(common); });

    // A checkpoint exactly at the target gives its logits without any prefill
    // (regenerating a reply on recurrent memory).
    if (common == tokens.size()) {
        for (const auto& c : checkpoints_) {
            if (c.position == int64_t(tokens.size()) && !memory_->canTruncate()) {
                restoreCheckpoint(c);
                tokens_.assign(tokens.begin(), tokens.end());
                logits_ = c.logits;
                stats_.lastReused = c.position;
                stats_.checkpointRestores++;
                return;
            }
        }
    }
    // At least the last token is computed, for its logits.
    rewindTo(std::min<int64_t>(int64_t(common), int64_t(tokens.size()) - 1));
    stats_.lastReused = int64_t(tokens_.size());
    run(tokens.subspan(tokens_.size()), ctx, progress);
}

void Session::rewindTo(int64_t keep) {
    if (int64_t(tokens_.size()) <= keep) return;
    if (memory_->canTruncate()) {
        memory_->truncate(keep);
        tokens_.resize(size_t(keep));
        return;
    }
    const Checkpoint* best = nullptr;
    for (const auto& c : checkpoints_)
        if (c.position <= keep && (!best || c.position > best->position)) best = &c;
    if (best) {
        restoreCheckpoint(*best);
        tokens_.resize(size_t(best->position));
        logits_ = best->logits;
        stats_.checkpointRestores++;
    } else {
        memory_->truncate(0);  // emptied in place, as reset() does
        tokens_.clear();
        logits_.clear();
    }
}

void Session::restoreCheckpoint(const Checkpoint& c) {
    if (c.memory) memory_->restoreCheckpoint(*c.memory);
    else session::applyStoredState(*c.stored, c.position, *memory_);
}

size_t Session::checkpointBytes(const Checkpoint& c) const {
    return (c.memory ? c.memory->bytes() : c.stored->bytes) + c.logits.size() * sizeof(float);
}

void Session::run(std::span<const int32_t> tokens, ExecContext& ctx, const FeedProgress& progress) {
    const int64_t vocab = model_.info().vocabSize;
    logits_.resize(size_t(vocab));
    const int64_t total = int64_t(tokens.size());
    int64_t done = 0, n = 0;
    LayerWatch watch;
    watch.cancel = progress.cancel;
    if (progress.onProgress)
        watch.onLayer = [&](int64_t layer, int64_t layers) { progress.onProgress(done + n * layer / layers, total); };
    const ScopedLayerWatch watching(ctx, watch);
    while (done < total) {
        if (progress.cancel && progress.cancel->load(std::memory_order_relaxed)) {
            // Only the last chunk computes logits (and a rewind left the old end's):
            // the prefix fed so far has none.
            logits_.clear();
            throw Cancelled();
        }
        n = std::min(options_.chunk, total - done);
        auto part = tokens.subspan(size_t(done), size_t(n));
        // A pass stopped (or failed) between layers leaves attention memory at
        // its old length but a recurrent state part-updated: that is put back
        // from a copy taken before the chunk (a few MB, against seconds of compute).
        const std::unique_ptr<Memory> before = memory_->canTruncate() ? nullptr : memory_->checkpoint();
        // Only the last chunk's logits are needed: the others skip the output matrix
        // (on llama-1b a 128256 × 2048 matvec, ≈ 215 MB read, per chunk).
        const bool last = done + n == total;
        try {
            model_.forward(*memory_, part, false, last ? logits_.data() : nullptr, ctx);
        } catch (...) {
            if (before) memory_->restoreCheckpoint(*before);
            logits_.clear();
            throw;
        }
        tokens_.insert(tokens_.end(), part.begin(), part.end());
        done += n;
        stats_.lastPrefilled += n;
        stats_.prefilledTotal += n;
        if (progress.onProgress) progress.onProgress(done, total);
    }
}

void Session::append(int32_t token, ExecContext& ctx) {
    if (memory_->size() >= memory_->capacity())
        throw Error("session", "the context of " + std::to_string(memory_->capacity()) + " tokens is full");
    logits_.resize(size_t(model_.info().vocabSize));
    model_.forward(*memory_, std::span<const int32_t>(&token, 1), false, logits_.data(), ctx);
    tokens_.push_back(token);
    stats_.decoded++;
}

void Session::checkpoint() {
    if (memory_->canTruncate() || logits_.empty()) return;
    const int64_t pos = int64_t(tokens_.size());
    for (const auto& c : checkpoints_)
        if (c.position == pos) return;
    checkpoints_.push_back({pos, memory_->checkpoint(), logits_, nullptr});
    // Over budget: drop the oldest positions first; the newest are the ones
    // regenerate and edit-the-last-message need.
    auto bytes = [&] {
        size_t b = 0;
        for (const auto& c : checkpoints_) b += checkpointBytes(c);
        return b;
    };
    std::sort(checkpoints_.begin(), checkpoints_.end(),
              [](const Checkpoint& a, const Checkpoint& b) { return a.position < b.position; });
    while (checkpoints_.size() > 1 &&
           (int(checkpoints_.size()) > options_.maxCheckpoints || bytes() > options_.checkpointBudget))
        checkpoints_.erase(checkpoints_.begin());
}

}  // namespace cairn
