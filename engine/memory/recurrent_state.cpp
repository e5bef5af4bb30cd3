#include "memory/recurrent_state.h"

#include "cairn/error.h"
#include "cairn/tensor_type.h"

#include <algorithm>
#include <limits>
#include <string>

namespace cairn::memory {

namespace {
// Refuse shapes whose state would be absurd (corrupt metadata), before allocating.
constexpr int64_t kMaxStateFloats = int64_t(1) << 31;
}  // namespace

RecurrentState::RecurrentState(const RecurrentShape& shape) : shape_(shape) {
    const auto& s = shape;
    if (s.layers <= 0 || s.channels <= 0 || s.convWidth < 0 || s.stateSize < 0 || s.convWidth + s.stateSize == 0 ||
        s.lanes <= 0 || s.lanes > 64 || s.convChannels < 0)
        throw Error("recurrent state", "invalid shape");
    const int64_t padded = s.blocks() * s.lanes, convPadded = s.convBlocks() * s.lanes;
    if (padded > kMaxStateFloats || convPadded > kMaxStateFloats || s.stateSize > kMaxStateFloats / padded ||
        s.convWidth > kMaxStateFloats / convPadded ||
        padded * s.stateSize + convPadded * s.convWidth > kMaxStateFloats / s.layers)
        throw Error("recurrent state", "state too large");
    conv_.assign(size_t(s.layers * convStride()), 0.f);
    ssm_.assign(size_t(s.layers * ssmStride()), 0.f);
}

int64_t RecurrentState::capacity() const { return std::numeric_limits<int64_t>::max(); }

void RecurrentState::truncate(int64_t n) {
    if (n == size_) return;
    if (n == 0) {
        reset();
        return;
    }
    throw Error("recurrent state",
                "cannot rewind a recurrent state from " + std::to_string(size_) + " to " + std::to_string(n) +
                    " positions (restore a checkpoint instead)");
}

std::unique_ptr<Memory> RecurrentState::clone() const { return std::make_unique<RecurrentState>(*this); }

void RecurrentState::restoreCheckpoint(const Memory& checkpoint) {
    const auto* c = dynamic_cast<const RecurrentState*>(&checkpoint);
    const RecurrentShape& a = shape_;
    if (!c || c->shape_.layers != a.layers || c->shape_.channels != a.channels || c->shape_.convWidth != a.convWidth ||
        c->shape_.stateSize != a.stateSize || c->shape_.lanes != a.lanes || c->shape_.convChannels != a.convChannels)
        throw Error("recurrent state", "the checkpoint belongs to another memory");
    conv_ = c->conv_;
    ssm_ = c->ssm_;
    size_ = c->size_;
}

void RecurrentState::reset() {
    std::fill(conv_.begin(), conv_.end(), 0.f);
    std::fill(ssm_.begin(), ssm_.end(), 0.f);
    size_ = 0;
}

std::vector<StateTensor> RecurrentState::state() {
    std::vector<StateTensor> out;
    auto view = [&](std::string name, float* data, int64_t blocks, int64_t width) {
        StateTensor t;
        t.name = std::move(name);
        t.typeId = int(TensorType::F32);
        t.rows = blocks * width;
        t.cols = shape_.lanes;
        t.rowStride = size_t(shape_.lanes) * sizeof(float);
        t.data = reinterpret_cast<uint8_t*>(data);
        out.push_back(std::move(t));
    };
    for (int64_t l = 0; l < shape_.layers; ++l) {
        const std::string blk = "blk." + std::to_string(l);
        if (shape_.convWidth > 0) view(blk + ".conv", conv(l), shape_.convBlocks(), shape_.convWidth);
        if (shape_.stateSize > 0) view(blk + ".ssm", ssm(l), shape_.blocks(), shape_.stateSize);
    }
    return out;
}

void RecurrentState::resizeForRestore(int64_t n) {
    if (n < 0) throw Error("recurrent state", "negative position count in a snapshot");
    reset();
    size_ = n;
}

}  // namespace cairn::memory
