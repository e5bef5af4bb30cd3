// The memory of a hybrid model (attention layers among recurrent ones): a KV
// cache for the attention layers and a recurrent state for the others, one
// Memory to the session. Layer l of the model is either attention layer
// kvIndex(l) of the cache or recurrent layer recurrentIndex(l) of the state.
//
// It cannot be cut back as a whole, so sessions checkpoint it; a checkpoint
// holds only the recurrent state and the position (checkpoint()), and
// restoring one cuts the KV cache back to that position and copies the state
// back (restoreCheckpoint()). Snapshot tensors are named by the model's layer
// numbers ("blk.2.k.h0", "blk.0.conv"), whichever kind the layer is.
#pragma once

#include "memory/kv_cache.h"
#include "memory/recurrent_state.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cairn::memory {

struct HybridShape {
    std::vector<bool> attention;  // per model layer: attention (true) or recurrent
    int64_t kvHeads = 0, keyDim = 0, valueDim = 0;
    RecurrentShape recurrent;  // its `layers` is ignored: the count of recurrent layers is used
};

class HybridMemory final : public Memory {
public:
    HybridMemory(const HybridShape& shape, const MemoryOptions& options);

    int64_t size() const override { return size_; }
    int64_t capacity() const override { return capacity_; }
    bool canTruncate() const override { return !rec_; }  // only without recurrent layers
    void truncate(int64_t n) override;  // with recurrent layers only n == size() (no-op) or n == 0 (reset)
    std::unique_ptr<Memory> clone() const override;
    std::unique_ptr<Memory> checkpoint() const override;
    void restoreCheckpoint(const Memory& checkpoint) override;
    size_t bytes() const override { return (kv_ ? kv_->bytes() : 0) + (rec_ ? rec_->bytes() : 0); }
    std::vector<StateTensor> state() override;
    void resizeForRestore(int64_t n) override;

    int64_t layers() const { return int64_t(index_.size()); }
    bool isAttention(int64_t layer) const { return attention_[size_t(layer)]; }
    int64_t kvIndex(int64_t layer) const { return index_[size_t(layer)]; }  // attention layers
    int64_t recurrentIndex(int64_t layer) const { return index_[size_t(layer)]; }  // recurrent layers
    bool isCheckpoint() const { return checkpoint_; }
    // Only when the model has layers of that kind (and, for kv(), not in a checkpoint).
    KvCache& kv() { return *kv_; }
    RecurrentState& recurrent() { return *rec_; }
    const HybridShape& shape() const { return shape_; }

    // Called by the model after a forward pass wrote n positions to every layer.
    void advance(int64_t n);

private:
    HybridMemory() = default;
    std::unique_ptr<HybridMemory> copy(bool withKv) const;
    std::vector<StateTensor> renamed(std::vector<StateTensor> tensors, bool attention) const;

    HybridShape shape_;
    std::vector<bool> attention_;
    std::vector<int64_t> index_;  // model layer → index within its kind
    std::vector<int64_t> kvLayers_, recLayers_;  // index within a kind → model layer
    int64_t capacity_ = 0, size_ = 0;
    bool checkpoint_ = false;
    std::unique_ptr<KvCache> kv_;  // null in a checkpoint or without attention layers
    std::unique_ptr<RecurrentState> rec_;  // null without recurrent layers
};

}  // namespace cairn::memory
