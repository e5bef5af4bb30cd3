// Per-conversation state of a recurrent (Mamba) model: a fixed-size block per
// layer that summarizes every position fed so far. It cannot be rewound to an
// earlier position (only reset to empty); checkpoints are full copies.
#pragma once

#include "cairn/model.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cairn::memory {

struct RecurrentShape {
    int64_t layers = 0;
    int64_t channels = 0;  // d_inner
    int64_t convWidth = 0;  // d_conv - 1: previous inputs each channel's conv1d still needs
    int64_t stateSize = 0;  // d_state (0: a conv-only layer, e.g. LFM2's short conv)
    int64_t lanes = 1;  // channel interleave of the layout (the kernels' SIMD lanes; 1 = plain)
    int64_t convChannels = 0;  // channels of the conv when they differ from the scan's (Mamba-2: x, B, C); 0 = channels

    int64_t blocks() const { return (channels + lanes - 1) / lanes; }
    int64_t convBlocks() const { return ((convChannels ? convChannels : channels) + lanes - 1) / lanes; }
};

class RecurrentState final : public Memory {
public:
    explicit RecurrentState(const RecurrentShape& shape);

    int64_t size() const override { return size_; }
    int64_t capacity() const override;  // unbounded: the state never grows
    bool canTruncate() const override { return false; }
    void truncate(int64_t n) override;  // only n == size() (no-op) or n == 0 (reset)
    std::unique_ptr<Memory> clone() const override;
    void restoreCheckpoint(const Memory& checkpoint) override;  // a copy of an equal-shaped state
    size_t bytes() const override { return (conv_.size() + ssm_.size()) * sizeof(float); }

    const RecurrentShape& shape() const { return shape_; }

    // Conv state of `layer`, f32: each channel's last convWidth inputs, oldest
    // first (zeros at the start of a sequence), stored [convBlocks][convWidth][lanes]:
    // channel c at block c / lanes, lane c % lanes; padding lanes stay zero.
    float* conv(int64_t layer) { return conv_.data() + layer * convStride(); }
    const float* conv(int64_t layer) const { return conv_.data() + layer * convStride(); }
    // SSM state of `layer`, f32: d_inner × d_state values h[c][n], stored
    // [blocks][stateSize][lanes] like the conv state.
    float* ssm(int64_t layer) { return ssm_.data() + layer * ssmStride(); }
    const float* ssm(int64_t layer) const { return ssm_.data() + layer * ssmStride(); }

    // Called by the model after a forward pass consumed n positions.
    void advance(int64_t n) { size_ += n; }
    void reset();

    // Snapshot views, F32 per layer in the stored layout: "blk.L.conv"
    // [convBlocks·convWidth × lanes] and "blk.L.ssm" [blocks·stateSize × lanes]
    // (each only when its width is not zero).
    // Restoring sets the position count first.
    std::vector<StateTensor> state() override;
    void resizeForRestore(int64_t n) override;

private:
    int64_t convStride() const { return shape_.convBlocks() * shape_.convWidth * shape_.lanes; }
    int64_t ssmStride() const { return shape_.blocks() * shape_.stateSize * shape_.lanes; }

    RecurrentShape shape_;
    int64_t size_ = 0;
    std::vector<float> conv_;  // [layers][convBlocks][convWidth][lanes]
    std::vector<float> ssm_;  // [layers][blocks][stateSize][lanes]
};

}  // namespace cairn::memory
