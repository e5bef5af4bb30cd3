#include "memory/hybrid_memory.h"

#include "cairn/error.h"

#include <string>

namespace cairn::memory {

HybridMemory::HybridMemory(const HybridShape& shape, const MemoryOptions& options)
    : shape_(shape), attention_(shape.attention), capacity_(options.contextSize) {
    if (attention_.empty()) throw Error("hybrid memory", "no layers");
    for (size_t l = 0; l < attention_.size(); ++l) {
        auto& list = attention_[l] ? kvLayers_ : recLayers_;
        index_.push_back(int64_t(list.size()));
        list.push_back(int64_t(l));
    }
    if (!kvLayers_.empty())
        kv_ = std::make_unique<KvCache>(int64_t(kvLayers_.size()), shape.kvHeads, shape.keyDim, shape.valueDim,
                                        options.contextSize, options.kvType);
    else if (capacity_ <= 0)
        throw Error("hybrid memory", "context size " + std::to_string(capacity_) + " is out of range");
    if (!recLayers_.empty()) {
        RecurrentShape r = shape.recurrent;
        r.layers = int64_t(recLayers_.size());
        rec_ = std::make_unique<RecurrentState>(r);
    }
}

void HybridMemory::truncate(int64_t n) {
    if (n == size_) return;
    if (!rec_ && kv_ && !checkpoint_) {
        kv_->truncate(n);
        size_ = n;
        return;
    }
    if (n != 0)
        throw Error("hybrid memory",
                    "cannot rewind the recurrent layers from " + std::to_string(size_) + " to " + std::to_string(n) +
                        " positions (restore a checkpoint instead)");
    if (kv_) kv_->truncate(0);
    if (rec_) rec_->reset();
    size_ = 0;
}

std::unique_ptr<HybridMemory> HybridMemory::copy(bool withKv) const {
    std::unique_ptr<HybridMemory> c(new HybridMemory);
    c->shape_ = shape_;
    c->attention_ = attention_;
    c->index_ = index_;
    c->kvLayers_ = kvLayers_;
    c->recLayers_ = recLayers_;
    c->capacity_ = capacity_;
    c->size_ = size_;
    c->checkpoint_ = checkpoint_ || !withKv;
    if (kv_ && withKv) c->kv_.reset(static_cast<KvCache*>(kv_->clone().release()));
    if (rec_) c->rec_ = std::make_unique<RecurrentState>(*rec_);
    return c;
}

std::unique_ptr<Memory> HybridMemory::clone() const { return copy(true); }

std::unique_ptr<Memory> HybridMemory::checkpoint() const { return copy(false); }

void HybridMemory::restoreCheckpoint(const Memory& checkpoint) {
    const auto* c = dynamic_cast<const HybridMemory*>(&checkpoint);
    if (!c || !c->checkpoint_ || c->attention_ != attention_ || c->capacity_ != capacity_ ||
        bool(c->rec_) != bool(rec_))
        throw Error("hybrid memory", "the checkpoint belongs to another memory");
    if (checkpoint_) throw Error("hybrid memory", "a checkpoint cannot restore another");
    if (c->size_ > size_)
        throw Error("hybrid memory",
                    "checkpoint at position " + std::to_string(c->size_) + " lies beyond the " + std::to_string(size_) +
                        " positions held");
    if (rec_) rec_->restoreCheckpoint(*c->rec_);
    if (kv_) kv_->truncate(c->size_);
    size_ = c->size_;
}

std::vector<StateTensor> HybridMemory::renamed(std::vector<StateTensor> tensors, bool attention) const {
    // The parts name their tensors "blk.<index within the kind>.…"; the snapshot uses the model's layer numbers.
    const auto& layers = attention ? kvLayers_ : recLayers_;
    for (auto& t : tensors) {
        const size_t dot = t.name.find('.', 4);
        const int64_t i = std::stoll(t.name.substr(4, dot - 4));
        t.name = "blk." + std::to_string(layers[size_t(i)]) + t.name.substr(dot);
    }
    return tensors;
}

std::vector<StateTensor> HybridMemory::state() {
    std::vector<StateTensor> out;
    if (kv_ && !checkpoint_) out = renamed(kv_->state(), true);
    if (rec_)
        for (auto& t : renamed(rec_->state(), false)) out.push_back(std::move(t));
    return out;
}

void HybridMemory::resizeForRestore(int64_t n) {
    if (n < 0 || n > capacity_)
        throw Error("hybrid memory",
                    "cannot restore " + std::to_string(n) + " positions into a context of " +
                        std::to_string(capacity_));
    if (kv_) kv_->resizeForRestore(n);
    if (rec_) rec_->resizeForRestore(n);
    size_ = n;
}

void HybridMemory::advance(int64_t n) {
    if (checkpoint_) throw Error("hybrid memory", "a checkpoint cannot be computed on");
    if (n < 0 || size_ + n > capacity_) throw Error("hybrid memory", "context is full");
    if (kv_) kv_->advance(n);
    if (rec_) rec_->advance(n);
    size_ += n;
}

}  // namespace cairn::memory
