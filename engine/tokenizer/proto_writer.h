// A minimal protocol-buffers wire-format writer: enough to serialize a
// sentencepiece ModelProto (no generated code or protobuf headers needed).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cairn::tokenizer {

class ProtoWriter {
public:
    void varint(uint32_t field, uint64_t value) {
        tag(field, 0);
        raw(value);
    }
    void int32(uint32_t field, int32_t value) { varint(field, uint64_t(int64_t(value))); }  // negatives: 10 bytes
    void boolean(uint32_t field, bool value) { varint(field, value ? 1 : 0); }
    void float32(uint32_t field, float value) {
        tag(field, 5);
        uint32_t bits;
        std::memcpy(&bits, &value, 4);
        for (int i = 0; i < 4; ++i) out_ += char((bits >> (8 * i)) & 0xFF);
    }
    void bytes(uint32_t field, std::string_view value) {  // strings and embedded messages
        tag(field, 2);
        raw(value.size());
        out_.append(value);
    }
    const std::string& data() const { return out_; }
    void reserve(size_t n) { out_.reserve(n); }

private:
    void tag(uint32_t field, uint32_t wireType) { raw((uint64_t(field) << 3) | wireType); }
    void raw(uint64_t v) {
        while (v >= 0x80) {
            out_ += char((v & 0x7F) | 0x80);
            v >>= 7;
        }
        out_ += char(v);
    }
    std::string out_;
};

}  // namespace cairn::tokenizer
