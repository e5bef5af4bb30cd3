// A Session is one conversation's live state on one loaded model: the token
// history plus the model memory (KV cache, recurrent state) that matches it.
//
// feed() brings the memory to a new token sequence while prefilling only what
// is new: attention memory is cut back to the common prefix, recurrent memory
// is restored from the latest checkpoint at or before it. Checkpoints are
// taken at message boundaries (checkpoint()), within a count and byte budget.
#pragma once

#include "cairn/exec.h"
#include "cairn/model.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace cairn {

namespace session {
struct StoredState;
}

struct SessionOptions {
    MemoryOptions memory;
    int64_t chunk = kDefaultPrefillChunk;  // prefill chunk (positions per pass over the weights)
    int maxCheckpoints = 16;  // recurrent memory only (a chat takes two a turn)
    size_t checkpointBudget = size_t(256) << 20;  // bytes, recurrent memory only
};

struct FeedProgress {
    // After each layer of each chunk: `done` counts the positions of the
    // chunk in flight in proportion to its layers computed.
    std::function<void(int64_t done, int64_t total)> onProgress;
    // Read before each layer: a feed stops within about one layer's time
    // and throws Cancelled; the session then holds the chunks fed before.
    const std::atomic<bool>* cancel = nullptr;
};

struct SessionStats {
    int64_t prefilledTotal = 0;  // positions computed by feed() over the session's life
    int64_t lastPrefilled = 0;  // positions computed by the last feed()
    int64_t lastReused = 0;  // positions the last feed() kept from memory
    int64_t decoded = 0;  // positions computed by append()
    int64_t checkpointRestores = 0;
};

class Session {
public:
    Session(const Model& model, SessionOptions options = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const Model& model() const { return model_; }
    const std::vector<int32_t>& tokens() const { return tokens_; }
    const SessionStats& stats() const { return stats_; }
    const Memory& memory() const { return *memory_; }
    int64_t contextSize() const { return memory_->capacity(); }

    // Makes the session hold exactly `tokens` and computes the logits that
    // follow them. Throws cairn::Error when they do not fit the context,
    // Cancelled when cancelled (then tokens() is the prefix fed so far).
    void feed(std::span<const int32_t> tokens, ExecContext& ctx, const FeedProgress& progress = {});
    // Appends one token (a decode step) and computes the logits that follow.
    void append(int32_t token, ExecContext& ctx);
    // Logits after the last fed token (vocabSize floats); empty before the first feed.
    std::span<const float> logits() const { return logits_; }

    // Records a checkpoint at the current position (a message boundary). A
    // no-op for memory that can be cut back (attention).
    void checkpoint();
    size_t checkpointCount() const { return checkpoints_.size(); }

    // Snapshots: see engine/session/snapshot.cpp for the format.
    enum class KvStorage { Native, F16, Q8_0 };
    std::vector<uint8_t> snapshot(KvStorage storage = KvStorage::Native) const;
    // Replaces the state with a snapshot's; throws cairn::Error (and leaves
    // the session empty) if it is damaged, of another version or model. The
    // stored checkpoints stay in the snapshot's bytes until one is used, so
    // the vector overload keeps the bytes it is given; the span overload
    // copies them when there are checkpoints.
    void restore(std::span<const uint8_t> snapshot);
    void restore(std::vector<uint8_t>&& snapshot);

    // Drops all state.
    void reset();

private:
    // Either a memory of its own or, after a restore, a section of the snapshot's bytes.
    struct Checkpoint {
        int64_t position;
        std::unique_ptr<Memory> memory;
        std::vector<float> logits;
        std::shared_ptr<const session::StoredState> stored;
    };
    void restoreCheckpoint(const Checkpoint& c);
    size_t checkpointBytes(const Checkpoint& c) const;
    void restoreBytes(std::span<const uint8_t> snapshot, std::shared_ptr<const std::vector<uint8_t>> owner);
    void rewindTo(int64_t keep);
    void run(std::span<const int32_t> tokens, ExecContext& ctx, const FeedProgress& progress);

    const Model& model_;
    SessionOptions options_;
    std::unique_ptr<Memory> memory_;
    std::vector<int32_t> tokens_;
    std::vector<float> logits_;
    std::vector<Checkpoint> checkpoints_;
    SessionStats stats_;
};

// 64-bit fingerprint of a model file: hash of its GGUF metadata and tensor-info
// region plus the file size. Snapshots refuse to load on another fingerprint.
uint64_t modelFingerprint(const Model& model);

}  // namespace cairn
