#include "memory/kv_cache.h"

#include "cairn/error.h"
#include "cairn/tensor_type.h"
#include "tensor/half_rows.h"

#include <cstring>
#include <new>
#include <string>

namespace cairn::memory {

KvCache::KvCache(int64_t layers, int64_t kvHeads, int64_t keyDim, int64_t valueDim, int64_t capacity, KvType type)
    : layers_(layers), kvHeads_(kvHeads), keyDim_(keyDim), valueDim_(valueDim), capacity_(capacity), type_(type) {
    if (layers <= 0 || kvHeads <= 0 || keyDim <= 0 || valueDim <= 0) throw Error("kv cache", "invalid geometry");
    if (capacity <= 0 || capacity > (int64_t(1) << 24))
        throw Error("kv cache", "context size " + std::to_string(capacity) + " is out of range (1 … 16777216)");
    kRow_ = size_t(keyDim) * elementBytes();
    vRow_ = size_t(valueDim) * elementBytes();
    const double total = double(layers) * double(kvHeads) * double(capacity) * double(kRow_ + vRow_);
    if (total > double(uint64_t(1) << 40))
        throw Error("kv cache", "context size " + std::to_string(capacity) + " needs too much memory");
    vBase_ = size_t(layers * kvHeads * capacity) * kRow_;
    totalBytes_ = vBase_ + size_t(layers * kvHeads * capacity) * vRow_;
    data_.reset(new (std::nothrow) uint8_t[totalBytes_]);
    if (!data_)
        throw Error("kv cache",
                    "cannot allocate " + std::to_string(totalBytes_ >> 20) + " MiB for a context of " +
                        std::to_string(capacity) + " tokens");
}

void KvCache::truncate(int64_t n) {
    if (n < 0 || n > size_)
        throw Error("kv cache",
                    "cannot truncate to " + std::to_string(n) + " positions (holds " + std::to_string(size_) + ")");
    size_ = n;
}

std::unique_ptr<Memory> KvCache::clone() const {
    auto c = std::make_unique<KvCache>(layers_, kvHeads_, keyDim_, valueDim_, capacity_, type_);
    for (int64_t l = 0; l < layers_; ++l)
        for (int64_t h = 0; h < kvHeads_; ++h) {
            std::memcpy(c->data_.get() + kOffset(l, h), keys(l, h), size_t(size_) * kRow_);
            std::memcpy(c->data_.get() + vOffset(l, h), values(l, h), size_t(size_) * vRow_);
        }
    c->size_ = size_;
    return c;
}

std::vector<StateTensor> KvCache::state() {
    std::vector<StateTensor> out;
    const int typeId = int(type_ == KvType::F32 ? TensorType::F32 : TensorType::F16);
    for (int64_t l = 0; l < layers_; ++l)
        for (int kind = 0; kind < 2; ++kind)
            for (int64_t h = 0; h < kvHeads_; ++h) {
                StateTensor t;
                t.name = "blk." + std::to_string(l) + (kind ? ".v.h" : ".k.h") + std::to_string(h);
                t.typeId = typeId;
                t.rows = size_;
                t.cols = kind ? valueDim_ : keyDim_;
                t.rowStride = kind ? vRow_ : kRow_;
                t.data = data_.get() + (kind ? vOffset(l, h) : kOffset(l, h));
                t.attention = true;
                out.push_back(std::move(t));
            }
    return out;
}

void KvCache::resizeForRestore(int64_t n) {
    if (n < 0 || n > capacity_)
        throw Error("kv cache",
                    "cannot restore " + std::to_string(n) + " positions into a context of " +
                        std::to_string(capacity_));
    size_ = n;
}

void KvCache::store(uint8_t* dst, const float* src, int64_t n) {
    if (type_ == KvType::F32) {
        std::memcpy(dst, src, size_t(n) * 4);
    } else {
        tensor::f32ToF16Row(src, reinterpret_cast<uint16_t*>(dst), n);
    }
}

void KvCache::writeK(int64_t layer, int64_t head, int64_t pos, const float* k) {
    store(data_.get() + kOffset(layer, head) + size_t(pos) * kRow_, k, keyDim_);
}

void KvCache::writeV(int64_t layer, int64_t head, int64_t pos, const float* v) {
    store(data_.get() + vOffset(layer, head) + size_t(pos) * vRow_, v, valueDim_);
}

void KvCache::advance(int64_t n) {
    if (n < 0 || size_ + n > capacity_) throw Error("kv cache", "context is full");
    size_ += n;
}

}  // namespace cairn::memory
