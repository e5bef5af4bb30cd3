// The attention memory: per layer, per KV head, a row of K and of V for every
// position (head-major: one head's positions are contiguous), stored as f32
// or f16, with room for `capacity` positions allocated up front.
#pragma once

#include "cairn/model.h"

#include <cstdint>
#include <memory>

namespace cairn::memory {

class KvCache : public Memory {
public:
    KvCache(int64_t layers, int64_t kvHeads, int64_t keyDim, int64_t valueDim, int64_t capacity, KvType type);

    int64_t size() const override { return size_; }
    int64_t capacity() const override { return capacity_; }
    bool canTruncate() const override { return true; }
    void truncate(int64_t n) override;
    std::unique_ptr<Memory> clone() const override;
    size_t bytes() const override { return totalBytes_; }
    std::vector<StateTensor> state() override;
    void resizeForRestore(int64_t n) override;

    KvType type() const { return type_; }
    int64_t layers() const { return layers_; }
    int64_t kvHeads() const { return kvHeads_; }
    int64_t keyDim() const { return keyDim_; }
    int64_t valueDim() const { return valueDim_; }

    // Stores f32 values (converted to the storage type) at position `pos`.
    void writeK(int64_t layer, int64_t head, int64_t pos, const float* k);
    void writeV(int64_t layer, int64_t head, int64_t pos, const float* v);
    // First row (position 0) of a head; rows are keyDim / valueDim elements, contiguous.
    const uint8_t* keys(int64_t layer, int64_t head) const { return data_.get() + kOffset(layer, head); }
    const uint8_t* values(int64_t layer, int64_t head) const { return data_.get() + vOffset(layer, head); }
    size_t elementBytes() const { return type_ == KvType::F32 ? 4 : 2; }

    // Marks positions [size, size + n) as filled (after a forward pass wrote them).
    void advance(int64_t n);

private:
    size_t kOffset(int64_t layer, int64_t head) const { return size_t((layer * kvHeads_ + head) * capacity_) * kRow_; }
    size_t vOffset(int64_t layer, int64_t head) const {
        return vBase_ + size_t((layer * kvHeads_ + head) * capacity_) * vRow_;
    }
    void store(uint8_t* dst, const float* src, int64_t n);

    int64_t layers_, kvHeads_, keyDim_, valueDim_, capacity_;
    KvType type_;
    int64_t size_ = 0;
    size_t kRow_, vRow_, vBase_, totalBytes_;
    std::unique_ptr<uint8_t[]> data_;  // not value-initialised: untouched pages cost no RAM
};

}  // namespace cairn::memory
