// A memory's state as bytes inside a snapshot (the whole format is described
// in snapshot.cpp), and the stored checkpoints a restored session keeps as
// those bytes until one is used: reading three recurrent states into fresh
// memory at every restore cost more than any other part of it (granite-4.0-h-1b:
// 3 × 54 MiB, each page faulted in and filled), and most restores use none.
#pragma once

#include "cairn/model.h"
#include "cairn/session.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cairn::session {

class ByteWriter {
public:
    std::vector<uint8_t> out;
    template <typename T>
    void put(T v) {
        uint8_t b[sizeof(T)];  // through a local array: GCC 12 warns (-Wstringop-overflow) on inserting &v directly
        std::memcpy(b, &v, sizeof(T));
        out.insert(out.end(), b, b + sizeof(T));
    }
    void bytes(const void* p, size_t n);
    void str(const std::string& s) {
        put<uint32_t>(uint32_t(s.size()));
        bytes(s.data(), s.size());
    }
};

// Reads a snapshot; every read past the end throws cairn::Error naming what was read.
class ByteReader {
public:
    explicit ByteReader(std::span<const uint8_t> data)
        : begin_(data.data()), p_(data.data()), end_(data.data() + data.size()) {}
    template <typename T>
    T get(const char* what) {
        T v;
        std::memcpy(&v, take(sizeof(T), what), sizeof(T));
        return v;
    }
    const uint8_t* take(uint64_t n, const char* what);
    std::string str(const char* what);
    size_t remaining() const { return size_t(end_ - p_); }
    size_t offset() const { return size_t(p_ - begin_); }

private:
    const uint8_t* begin_;
    const uint8_t* p_;
    const uint8_t* end_;
};

// The state of `memory` (every tensor of state()), K/V rows in `storage`'s type.
void writeState(ByteWriter& w, Memory& memory, Session::KvStorage storage);
// Fills `memory` (already sized with resizeForRestore) from the stream, checking every name and shape.
void readState(ByteReader& r, Memory& memory);

// A state section that stays in the snapshot's bytes until it is used.
struct StoredState {
    std::shared_ptr<const std::vector<uint8_t>> snapshot;
    size_t offset = 0;  // of the section's tensor count
    size_t bytes = 0;  // of the tensors a checkpoint keeps (those that cannot be cut back)
};

// Bytes of the tensors of `live` that a checkpoint keeps.
size_t checkpointBytes(Memory& live);
// Checks a checkpoint section against `live` (exactly its tensors that cannot
// be cut back, in order, in their own type and shape) and steps over it.
void skipCheckpointState(ByteReader& r, Memory& live);
// Brings `live` back to `position` from a stored section (a checkpoint's, or a
// whole state whose K/V tensors are skipped): its attention rows are cut back,
// the other tensors read from the bytes.
void applyStoredState(const StoredState& stored, int64_t position, Memory& live);
// Writes a stored section's checkpoint tensors as writeState would have written
// a checkpoint's memory (those tensors are always stored in their own type).
void writeStoredState(ByteWriter& w, const StoredState& stored, Memory& live);

}  // namespace cairn::session
