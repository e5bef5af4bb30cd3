// Every malformed-file check of the reader, each provoked deliberately: a valid
// file from our Writer, then a few bytes patched. The error must say what is
// wrong, name the key or tensor, and give the byte offset of the bad field.
#include "gguf_bytes.h"

#include <QTest>

using namespace cairn;
using namespace cairn::test;

namespace {

Bytes filled(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 7 + 1);
    return b;
}

// A small but complete file: string, integer, bool and array values, a
// quantized and a plain tensor.
Bytes baseFile() {
    gguf::Writer w;
    w.setString("general.architecture", "llama");
    w.setString("general.name", "validation");
    w.setUInt32("llama.context_length", 128);
    w.setBool("tokenizer.ggml.add_bos_token", true);
    w.setStrings("tokenizer.ggml.tokens", {"<s>", "a", "b"});
    w.setFloats("tokenizer.ggml.scores", {0.f, -1.f, -2.f});
    w.addTensor("token_embd.weight", TensorType::Q8_0, {32, 3}, filled(34 * 3));
    w.addTensor("output_norm.weight", TensorType::F32, {32}, filled(32 * 4));
    return w.toBytes();
}

gguf::File parsed(const Bytes& b) { return gguf::File::fromMemory(b.data(), b.size(), "test.gguf"); }

std::string at(uint64_t offset) { return "(at byte " + std::to_string(offset) + ")"; }

}  // namespace

// Checks that parsing fails with a one-line message holding every part.
#define EXPECT_ERROR(bytes, ...)                                                                                       \
    do {                                                                                                               \
        auto err_ = parseError(bytes);                                                                                 \
        QVERIFY2(err_.has_value(), "the file loaded, an error was expected");                                          \
        QVERIFY2(err_->find('\n') == std::string::npos, err_->c_str());                                                \
        QVERIFY2(err_->rfind("test.gguf: ", 0) == 0, err_->c_str());                                                   \
        for (const std::string& part_ : std::initializer_list<std::string>{__VA_ARGS__})                               \
            QVERIFY2(err_->find(part_) != std::string::npos, ("missing '" + part_ + "' in: " + *err_).c_str());        \
    } while (0)

class TestGgufValidation : public QObject {
    Q_OBJECT
private slots:
    void baseFileLoads() {
        auto b = baseFile();
        QVERIFY(!parseError(b).has_value());
    }

    void wrongMagic() {
        auto b = baseFile();
        b[0] = 'X';
        EXPECT_ERROR(b, "not a GGUF file", "'XGUF'", at(0));
        Bytes notGguf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
        EXPECT_ERROR(notGguf, "not a GGUF file", "'\\x7fELF'");
    }

    void tooShortForMagic() {
        Bytes b = {'G', 'G'};
        EXPECT_ERROR(b, "truncated file", "2 bytes");
        EXPECT_ERROR(Bytes{}, "truncated file", "0 bytes");
    }

    void unsupportedVersion() {
        auto b = baseFile();
        store<uint32_t>(b, 4, 4);
        EXPECT_ERROR(b, "unsupported GGUF version 4", "supported: 2 and 3", at(4));
        store<uint32_t>(b, 4, 1);
        EXPECT_ERROR(b, "unsupported GGUF version 1", at(4));
        store<uint32_t>(b, 4, 0);
        EXPECT_ERROR(b, "unsupported GGUF version 0", at(4));
        store<uint32_t>(b, 4, 0x03000000);  // a v3 file written big-endian
        EXPECT_ERROR(b, "big-endian", at(4));
    }

    void version2Reads() {
        auto b = baseFile();
        store<uint32_t>(b, 4, 2);
        auto f = parsed(b);
        QCOMPARE(f.version(), 2u);
        QCOMPARE(f.getString("general.name"), std::string_view("validation"));
        QCOMPARE(f.tensors().size(), size_t(2));
    }

    void truncatedInHeader() {
        auto b = baseFile();
        b.resize(12);
        EXPECT_ERROR(b, "truncated file", "tensor count needs 8 bytes, 4 left", at(8));
        b.resize(20);
        EXPECT_ERROR(b, "truncated file", "metadata count needs 8 bytes, 4 left", at(16));
    }

    void truncatedInsideMetadataAndTensorInfos() {
        // Cut inside the value type of general.name (few entries, so that the
        // metadata count still fits in what is left).
        gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setString("general.name", "validation");
        auto small = w.toBytes();
        auto kv = kvFields(parsed(small), "general.name");
        Bytes b(small.begin(), small.begin() + long(kv.type + 2));
        EXPECT_ERROR(b, "truncated file", "metadata key 'general.name'", "value type needs 4 bytes, 2 left",
                     at(kv.type));
        // The same cut in a file with more entries: the count cannot fit any more.
        auto full = baseFile();
        auto f = parsed(full);
        b.assign(full.begin(), full.begin() + long(kvFields(f, "general.name").type + 2));
        EXPECT_ERROR(b, "absurd metadata count 6", "(truncated or corrupt file)", at(16));
        // Cut inside the offset of the second tensor.
        auto t = tensorFields(f, "output_norm.weight");
        b.assign(full.begin(), full.begin() + long(t.offset + 3));
        EXPECT_ERROR(b, "truncated file", "tensor 'output_norm.weight'", "data offset needs 8 bytes, 3 left",
                     at(t.offset));
    }

    void truncatedBeforeDataSection() {
        auto full = baseFile();
        auto f = parsed(full);
        uint64_t headerEnd = f.headerBytes().size();
        QVERIFY(headerEnd % 32 != 0);  // the padding is needed
        Bytes b(full.begin(), full.begin() + long(headerEnd));
        EXPECT_ERROR(b, "truncated file", "tensor data section starts at byte " + std::to_string(f.dataOffset()),
                     "aligned to 32", at(headerEnd));
    }

    void truncatedInData() {
        auto full = baseFile();
        auto f = parsed(full);
        auto t = tensorFields(f, "output_norm.weight");
        const auto& info = f.tensor("output_norm.weight");
        Bytes b(full.begin(), full.begin() + long(f.dataOffset() + info.offset + info.nbytes - 1));
        EXPECT_ERROR(b, "tensor 'output_norm.weight'", "its 128 bytes of data",
                     "run past the end of the file (" + std::to_string(b.size()) + " bytes)", at(t.offset));
    }

    void stringLengthPastTheEnd() {
        auto b = baseFile();
        auto kv = kvFields(parsed(b), "general.name");
        store<uint64_t>(b, kv.value, 1000000);
        EXPECT_ERROR(b, "metadata key 'general.name'", "string value length 1000000 runs past the end of the file",
                     at(kv.value));
        // The key's own length.
        b = baseFile();
        store<uint64_t>(b, kv.keyLength, uint64_t(1) << 40);
        EXPECT_ERROR(b, "metadata entry #1", "key length 1099511627776 runs past the end", at(kv.keyLength));
        // A tensor name's length.
        b = baseFile();
        auto t = tensorFields(parsed(b), "output_norm.weight");
        store<uint64_t>(b, t.nameLength, ~uint64_t(0));
        EXPECT_ERROR(b, "tensor info #1", "name length 18446744073709551615 runs past the end", at(t.nameLength));
    }

    void arrayLengthPastTheEnd() {
        auto b = baseFile();
        auto scores = kvFields(parsed(b), "tokenizer.ggml.scores");
        store<uint64_t>(b, scores.value + 4, 1000000000);
        EXPECT_ERROR(b, "metadata key 'tokenizer.ggml.scores'", "array of 1000000000 float32 values runs past the end",
                     at(scores.value + 4));
        b = baseFile();
        auto tokens = kvFields(parsed(b), "tokenizer.ggml.tokens");
        store<uint64_t>(b, tokens.value + 4, uint64_t(1) << 62);
        EXPECT_ERROR(b, "metadata key 'tokenizer.ggml.tokens'", "array of 4611686018427387904 strings cannot fit",
                     at(tokens.value + 4));
        // One string inside the array (the second, "a") claims too much.
        b = baseFile();
        uint64_t second = tokens.value + 4 + 8 + 8 + 3;
        QCOMPARE(fetch<uint64_t>(b, second), uint64_t(1));
        store<uint64_t>(b, second, 5000);
        EXPECT_ERROR(b, "metadata key 'tokenizer.ggml.tokens'", "string #1 length 5000 runs past the end", at(second));
    }

    void absurdCounts() {
        auto b = baseFile();
        store<uint64_t>(b, 16, uint64_t(1) << 40);
        EXPECT_ERROR(b, "absurd metadata count 1099511627776", at(16));
        b = baseFile();
        store<uint64_t>(b, 8, 1000000);
        EXPECT_ERROR(b, "absurd tensor count 1000000", at(8));
        // Plausible for the bytes left, yet the tables would outgrow the file.
        b = baseFile();
        b.resize(200 * 1024, 0);
        store<uint64_t>(b, 16, 10000);
        EXPECT_ERROR(b, "absurd counts: 10000 metadata entries", at(8));
    }

    void unknownValueTypes() {
        auto b = baseFile();
        auto kv = kvFields(parsed(b), "llama.context_length");
        store<uint32_t>(b, kv.type, 13);
        EXPECT_ERROR(b, "metadata key 'llama.context_length'", "unknown value type 13", at(kv.type));
        b = baseFile();
        auto arr = kvFields(parsed(b), "tokenizer.ggml.scores");
        store<uint32_t>(b, arr.value, 99);
        EXPECT_ERROR(b, "metadata key 'tokenizer.ggml.scores'", "unknown array element type 99", at(arr.value));
        store<uint32_t>(b, arr.value, uint32_t(gguf::ValueType::Array));
        EXPECT_ERROR(b, "metadata key 'tokenizer.ggml.scores'", "nested arrays are not supported", at(arr.value));
    }

    void boolMustBeZeroOrOne() {
        auto b = baseFile();
        auto kv = kvFields(parsed(b), "tokenizer.ggml.add_bos_token");
        b[kv.value] = 2;
        EXPECT_ERROR(b, "metadata key 'tokenizer.ggml.add_bos_token'", "bool value is 2", "must be 0 or 1",
                     at(kv.value));
        gguf::Writer w;
        Bytes flags = {1, 0, 1, 0};
        w.setArray("flags", gguf::ValueType::Bool, 4, flags);
        auto a = w.toBytes();
        auto fa = kvFields(parsed(a), "flags");
        a[fa.value + 12 + 2] = 0xff;
        EXPECT_ERROR(a, "metadata key 'flags'", "bool #2 is 255", at(fa.value + 12 + 2));
    }

    void emptyAndOverlongNames() {
        auto b = baseFile();
        auto kv = kvFields(parsed(b), "general.name");
        store<uint64_t>(b, kv.keyLength, 0);
        EXPECT_ERROR(b, "metadata entry #1 has an empty key", at(kv.keyLength));
        // A 64-byte tensor name is the spec's limit; claiming 65 bytes is refused.
        gguf::Writer w;
        std::string longName(64, 'n');
        w.addTensor(longName, TensorType::F32, {4}, filled(16));
        auto t = w.toBytes();
        QVERIFY(!parseError(t).has_value());
        store<uint64_t>(t, 24, 65);
        EXPECT_ERROR(t, "tensor name 'nnnn", "is 65 bytes long (GGUF allows 64)", at(24));
    }

    void dimensionChecks() {
        auto b = baseFile();
        auto t = tensorFields(parsed(b), "token_embd.weight");
        store<uint32_t>(b, t.nDims, 5);
        EXPECT_ERROR(b, "tensor 'token_embd.weight'", "5 dimensions (GGUF allows at most 4)", at(t.nDims));
        b = baseFile();
        store<uint64_t>(b, t.dims, uint64_t(1) << 32);
        store<uint64_t>(b, t.dims + 8, uint64_t(1) << 32);
        EXPECT_ERROR(b, "tensor 'token_embd.weight'", "dimension 1 = 4294967296 makes the element count overflow int64",
                     at(t.dims + 8));
        b = baseFile();
        store<uint64_t>(b, t.dims + 8, uint64_t(1) << 63);
        EXPECT_ERROR(b, "tensor 'token_embd.weight'", "dimension 1 is 9223372036854775808, beyond the int64 range",
                     at(t.dims + 8));
        b = baseFile();
        store<uint64_t>(b, t.dims, 33);
        EXPECT_ERROR(b, "tensor 'token_embd.weight'", "row length 33 is not a multiple of the Q8_0 block size 32");
    }

    void bytesOverflow() {
        // 2^62 F64 elements fit int64, but their 2^65 bytes do not fit 64 bits.
        gguf::Writer w;
        w.addTensor("x", TensorType::F32, {4}, filled(16));
        auto b = w.toBytes();
        auto t = tensorFields(parsed(b), "x");
        store<uint64_t>(b, t.dims, uint64_t(1) << 62);
        store<uint32_t>(b, t.type, uint32_t(TensorType::F64));
        EXPECT_ERROR(b, "tensor 'x'", "size in bytes overflows", at(t.type));
    }

    void unknownTensorType() {
        auto b = baseFile();
        auto t = tensorFields(parsed(b), "output_norm.weight");
        store<uint32_t>(b, t.type, 31);  // a number ggml retired
        EXPECT_ERROR(b, "tensor 'output_norm.weight'", "unknown tensor type 31", at(t.type));
        store<uint32_t>(b, t.type, 1000);
        EXPECT_ERROR(b, "tensor 'output_norm.weight'", "unknown tensor type 1000", at(t.type));
    }

    void tensorDataOutsideTheFile() {
        auto b = baseFile();
        auto f = parsed(b);
        auto t = tensorFields(f, "output_norm.weight");
        uint64_t dataBytes = b.size() - f.dataOffset();
        store<uint64_t>(b, t.offset, 1 << 20);
        EXPECT_ERROR(b, "tensor 'output_norm.weight'", "data offset 1048576 lies past the end of the file",
                     "holds " + std::to_string(dataBytes) + " bytes", at(t.offset));
        b = baseFile();
        store<uint64_t>(b, t.offset, dataBytes - 32);  // aligned, but 128 bytes do not fit in the last 32
        EXPECT_ERROR(b, "tensor 'output_norm.weight'", "its 128 bytes of data", "run past the end", at(t.offset));
    }

    void tensorDataMisaligned() {
        auto b = baseFile();
        auto t = tensorFields(parsed(b), "output_norm.weight");
        store<uint64_t>(b, t.offset, fetch<uint64_t>(b, t.offset) + 4);
        EXPECT_ERROR(b, "tensor 'output_norm.weight'", "is not a multiple of the alignment 32", at(t.offset));
    }

    void duplicateKeys() {
        gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setUInt32("a.key", 1);
        w.setUInt32("a.kez", 2);
        auto b = w.toBytes();
        auto second = kvFields(parsed(b), "a.kez");
        b[second.keyLength + 8 + 4] = 'y';
        EXPECT_ERROR(b, "duplicate metadata key 'a.key' (entries #1 and #2)", at(second.keyLength));
    }

    void duplicateTensorNames() {
        gguf::Writer w;
        w.addTensor("blk.0.w", TensorType::F32, {8}, filled(32));
        w.addTensor("blk.1.w", TensorType::F32, {8}, filled(32));
        w.addTensor("blk.0.v", TensorType::F32, {8}, filled(32));
        auto b = w.toBytes();
        auto third = tensorFields(parsed(b), "blk.0.v");
        b[third.nameLength + 8 + 6] = 'w';
        EXPECT_ERROR(b, "duplicate tensor name 'blk.0.w' (entries #0 and #2)", at(third.nameLength));
    }

    void alignmentRules() {
        gguf::Writer w(64);
        w.addTensor("x", TensorType::F32, {4}, filled(16));
        auto b = w.toBytes();
        auto f = parsed(b);
        QCOMPARE(f.alignment(), 64u);
        auto kv = kvFields(f, "general.alignment");
        for (uint32_t bad : {0u, 4u, 24u, 48u}) {
            store<uint32_t>(b, kv.value, bad);
            EXPECT_ERROR(b, "general.alignment " + std::to_string(bad) + " is not a power of two and a multiple of 8",
                         at(kv.keyLength));
        }
        // The key must be uint32.
        gguf::Writer w2;
        w2.setUInt64("general.alignmenX", 64);
        auto c = w2.toBytes();
        auto kv2 = kvFields(parsed(c), "general.alignmenX");
        c[kv2.type - 1] = 't';
        EXPECT_ERROR(c, "general.alignment must be uint32, not uint64", at(kv2.keyLength));
    }

    void messagesStayOnOneLine() {
        gguf::Writer w;
        w.setUInt32("evil\nkey\x01", 1);
        auto b = w.toBytes();
        auto kv = kvFields(parsed(b), "evil\nkey\x01");
        store<uint32_t>(b, kv.type, 77);
        EXPECT_ERROR(b, "metadata key 'evil\\x0akey\\x01': unknown value type 77");
        // A huge name is cut in the message.
        gguf::Writer w2;
        std::string huge(60000, 'k');
        w2.setUInt32(huge, 1);
        auto c = w2.toBytes();
        store<uint32_t>(c, 24 + 8 + huge.size(), 77);
        auto err = parseError(c);
        QVERIFY(err.has_value());
        QVERIFY2(err->size() < 300, err->c_str());
        QVERIFY(err->find("kkk...'") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestGgufValidation)
#include "test_gguf_validation.moc"
