// Round trips through our writer and reader on in-memory files: every value
// type with extreme values, empty arrays and strings, files without tensors,
// zero-size and zero-dimension tensors, custom alignment, GGUF v2.
#include "gguf_bytes.h"
#include "shared_data.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <limits>

using namespace cairn;
using namespace cairn::test;

namespace {

gguf::File parsed(const Bytes& b) { return gguf::File::fromMemory(b.data(), b.size(), "memory"); }

Bytes asBytes(const std::vector<float>& v) {
    Bytes b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

}  // namespace

class TestGgufWriterReader : public QObject {
    Q_OBJECT
private slots:
    void roundTripsMetadataAndTensors() {
        gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setUInt32("llama.block_count", 2);
        w.setFloat32("llama.rope.freq_base", 10000.f);
        w.setBool("tokenizer.ggml.add_bos_token", true);
        w.setStrings("tokenizer.ggml.tokens", {"<s>", "a", ""});
        w.setFloats("tokenizer.ggml.scores", {0.f, -1.5f, 2.f});
        std::vector<float> data(64 * 3);
        for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) * 0.5f;
        w.addTensor("x.weight", TensorType::F32, {64, 3}, asBytes(data));
        auto bytes = w.toBytes();
        auto f = parsed(bytes);

        QCOMPARE(f.version(), 3u);
        QCOMPARE(f.architecture(), std::string("llama"));
        QCOMPARE(f.getInt("llama.block_count", 0), 2);
        QCOMPARE(f.getFloat("llama.rope.freq_base", 0), 10000.0);
        QVERIFY(f.getBool("tokenizer.ggml.add_bos_token", false));
        auto tokens = f.get("tokenizer.ggml.tokens").strings();
        QCOMPARE(tokens.size(), size_t(3));
        QCOMPARE(tokens[1], std::string_view("a"));
        QCOMPARE(tokens[2], std::string_view(""));
        QCOMPARE(f.get("tokenizer.ggml.scores").numbers()[1], -1.5);
        const auto& t = f.tensor("x.weight");
        QCOMPARE(t.ne[0], 64);
        QCOMPARE(t.ne[1], 3);
        QCOMPARE(t.nbytes, data.size() * 4);
        QCOMPARE(uint64_t(t.data - bytes.data()) % 32, 0u);
        QVERIFY(std::memcmp(t.data, data.data(), t.nbytes) == 0);
        // Canonical tail: the last tensor is padded to the alignment too.
        QCOMPARE(bytes.size() % 32, size_t(0));
        QCOMPARE(uint64_t(bytes.size()), f.dataOffset() + 64 * 3 * 4);
    }

    void everyScalarTypeWithExtremes() {
        gguf::Writer w;
        w.setUInt8("u8", 255);
        w.setInt8("i8", -128);
        w.setUInt16("u16", 65535);
        w.setInt16("i16", -32768);
        w.setUInt32("u32", 4294967295u);
        w.setInt32("i32", std::numeric_limits<int32_t>::min());
        w.setUInt64("u64.small", uint64_t(1) << 62);
        w.setUInt64("u64.max", std::numeric_limits<uint64_t>::max());
        w.setInt64("i64", std::numeric_limits<int64_t>::min());
        w.setFloat32("f32", -3.25f);
        w.setFloat64("f64", 1e300);
        w.setFloat32("f32.nan", std::numeric_limits<float>::quiet_NaN());
        w.setBool("yes", true);
        w.setBool("no", false);
        w.setString("s", "h\xc3\xa9llo");
        w.setString("s.empty", "");
        auto bytes = w.toBytes();
        auto f = parsed(bytes);

        QCOMPARE(f.metadata().size(), size_t(16));
        QCOMPARE(f.get("u8").type(), gguf::ValueType::UInt8);
        QCOMPARE(f.getInt("u8", 0), 255);
        QCOMPARE(f.getInt("i8", 0), -128);
        QCOMPARE(f.getInt("u16", 0), 65535);
        QCOMPARE(f.getInt("i16", 0), -32768);
        QCOMPARE(f.getInt("u32", 0), int64_t(4294967295u));
        QCOMPARE(f.getInt("i32", 0), int64_t(std::numeric_limits<int32_t>::min()));
        QCOMPARE(f.getInt("u64.small", 0), int64_t(1) << 62);
        QVERIFY_THROWS_EXCEPTION(Error, f.getInt("u64.max", 0));  // does not fit int64
        QCOMPARE(f.getFloat("u64.max", 0), 18446744073709551615.0);
        QCOMPARE(f.getInt("i64", 0), std::numeric_limits<int64_t>::min());
        QCOMPARE(f.getFloat("f32", 0), -3.25);
        QCOMPARE(f.getFloat("f64", 0), 1e300);
        QVERIFY(std::isnan(f.getFloat("f32.nan", 0)));
        QCOMPARE(f.getBool("yes", false), true);
        QCOMPARE(f.getBool("no", true), false);
        QCOMPARE(f.getString("s"), std::string_view("h\xc3\xa9llo"));
        QCOMPARE(f.getString("s.empty", "x"), std::string_view(""));
        QCOMPARE(f.get("i16").type(), gguf::ValueType::Int16);
        QCOMPARE(f.get("f64").type(), gguf::ValueType::Float64);
        // Type mismatches are errors naming the key.
        try {
            (void)f.getString("u8");
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(std::string(e.what()), std::string("metadata key 'u8': is uint8, expected string"));
        }
    }

    void everyArrayTypeIncludingEmpty() {
        gguf::Writer w;
        Bytes u16 = {1, 0, 0xff, 0xff};
        w.setArray("a.u16", gguf::ValueType::UInt16, 2, u16);
        Bytes i64(16);
        store<int64_t>(i64, 0, -5);
        store<int64_t>(i64, 8, std::numeric_limits<int64_t>::max());
        w.setArray("a.i64", gguf::ValueType::Int64, 2, i64);
        Bytes f64(8);
        store<double>(f64, 0, 0.125);
        w.setArray("a.f64", gguf::ValueType::Float64, 1, f64);
        Bytes bools = {1, 0, 1};
        w.setArray("a.bool", gguf::ValueType::Bool, 3, bools);
        w.setArray("a.empty_u8", gguf::ValueType::UInt8, 0, {});
        w.setStrings("a.empty_strings", {});
        w.setFloats("a.empty_floats", {});
        w.setInt32s("a.i32", {-1, 7});
        auto bytes = w.toBytes();
        auto f = parsed(bytes);

        QCOMPARE(f.get("a.u16").elementType(), gguf::ValueType::UInt16);
        QCOMPARE(f.get("a.u16").numbers(), (std::vector<double>{1, 65535}));
        QCOMPARE(f.get("a.i64").numbers()[0], -5.0);
        QCOMPARE(f.get("a.i64").rawArray().size(), size_t(16));
        QCOMPARE(fetch<int64_t>(Bytes(f.get("a.i64").rawArray().begin(), f.get("a.i64").rawArray().end()), 8),
                 std::numeric_limits<int64_t>::max());
        QCOMPARE(f.get("a.f64").numbers(), (std::vector<double>{0.125}));
        QCOMPARE(f.get("a.bool").numbers(), (std::vector<double>{1, 0, 1}));
        QCOMPARE(f.get("a.empty_u8").size(), uint64_t(0));
        QVERIFY(f.get("a.empty_u8").numbers().empty());
        QCOMPARE(f.get("a.empty_strings").elementType(), gguf::ValueType::String);
        QVERIFY(f.get("a.empty_strings").strings().empty());
        QVERIFY(f.get("a.empty_floats").rawArray().empty());
        QCOMPARE(f.get("a.i32").numbers(), (std::vector<double>{-1, 7}));
        QVERIFY_THROWS_EXCEPTION(Error, f.get("a.i32").strings());
        QVERIFY_THROWS_EXCEPTION(Error, f.get("a.empty_strings").numbers());
    }

    void bigValues() {
        // A long string and a long array, each much larger than the rest of the file.
        std::string big(3 << 20, 'z');
        big[12345] = '\0';  // strings are length-prefixed, not terminated
        std::vector<float> many(1 << 20);
        for (size_t i = 0; i < many.size(); ++i) many[i] = float(i);
        gguf::Writer w;
        w.setString("big.string", big);
        w.setFloats("big.floats", many);
        auto bytes = w.toBytes();
        auto f = parsed(bytes);
        QCOMPARE(f.getString("big.string").size(), big.size());
        QVERIFY(f.getString("big.string") == big);
        auto n = f.get("big.floats").numbers();
        QCOMPARE(n.size(), many.size());
        QCOMPARE(n.back(), double(many.back()));
    }

    void fileWithoutTensorsEndsAfterMetadata() {
        gguf::Writer w;
        w.setString("general.architecture", "none");
        auto b = w.toBytes();
        auto f = parsed(b);
        QVERIFY(f.tensors().empty());
        // No padding written: the data section starts exactly at the end of the file.
        QCOMPARE(uint64_t(b.size()), uint64_t(f.headerBytes().size()));
        QCOMPARE(f.dataOffset(), uint64_t(b.size()));
        // With the padding ggml writes, the data section starts after it.
        Bytes padded = b;
        padded.resize((b.size() + 31) / 32 * 32, 0);
        auto g = parsed(padded);
        QCOMPARE(g.dataOffset(), uint64_t(padded.size()));
        // And a bare header with nothing at all.
        gguf::Writer empty;
        auto e = empty.toBytes();
        QCOMPARE(e.size(), size_t(24));
        auto h = parsed(e);
        QVERIFY(h.metadata().empty());
        QVERIFY(h.tensors().empty());
        QCOMPARE(h.dataOffset(), uint64_t(24));
    }

    void zeroSizeAndZeroDimensionTensors() {
        gguf::Writer w;
        w.addTensor("empty", TensorType::Q4_0, {32, 0}, Bytes{});
        w.addTensor("scalar", TensorType::F32, {}, asBytes({2.5f}));
        w.addTensor("also.empty", TensorType::F16, {0}, Bytes{});
        auto b = w.toBytes();
        auto f = parsed(b);
        QCOMPARE(f.tensor("empty").nbytes, size_t(0));
        QCOMPARE(f.tensor("empty").elements(), int64_t(0));
        QCOMPARE(f.tensor("empty").nDims, 2u);
        QCOMPARE(f.tensor("scalar").nDims, 0u);
        QCOMPARE(f.tensor("scalar").elements(), int64_t(1));
        float v;
        std::memcpy(&v, f.tensor("scalar").data, 4);
        QCOMPARE(v, 2.5f);
        QCOMPARE(f.tensor("also.empty").offset, uint64_t(32));

        // Only empty tensors: the data section starts exactly at the end of the file.
        gguf::Writer z;
        z.addTensor("nothing", TensorType::F32, {0, 4}, Bytes{});
        auto zb = z.toBytes();
        auto zf = parsed(zb);
        QCOMPARE(zf.dataOffset(), uint64_t(zb.size()));
        QCOMPARE(zf.tensor("nothing").data, zb.data() + zb.size());
    }

    void customAlignment() {
        gguf::Writer w(64);
        w.setString("general.architecture", "llama");
        w.addTensor("a", TensorType::F32, {3}, asBytes({1, 2, 3}));
        w.addTensor("b", TensorType::F32, {5}, asBytes({1, 2, 3, 4, 5}));
        auto b = w.toBytes();
        auto f = parsed(b);
        QCOMPARE(f.alignment(), 64u);
        QCOMPARE(f.get("general.alignment").asInt(), 64);
        QCOMPARE(f.dataOffset() % 64, uint64_t(0));
        QCOMPARE(f.tensor("b").offset, uint64_t(64));
        QCOMPARE(b.size() % 64, size_t(0));
        // A general.alignment value set explicitly rules over the constructor's.
        gguf::Writer x(64);
        x.setUInt32("general.alignment", 128);
        x.addTensor("a", TensorType::F32, {3}, asBytes({1, 2, 3}));
        x.addTensor("b", TensorType::F32, {3}, asBytes({1, 2, 3}));
        auto xb = x.toBytes();
        auto xf = parsed(xb);
        QCOMPARE(xf.alignment(), 128u);
        QCOMPARE(xf.metadata().size(), size_t(1));
        QCOMPARE(xf.tensor("b").offset, uint64_t(128));
    }

    void version2FileReadsIdentically() {
        gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setStrings("tokenizer.ggml.tokens", {"a", "b"});
        w.addTensor("t", TensorType::F32, {4}, asBytes({1, 2, 3, 4}));
        auto v3 = w.toBytes();
        Bytes v2 = v3;
        store<uint32_t>(v2, 4, 2);
        auto f3 = parsed(v3);
        auto f2 = parsed(v2);
        QCOMPARE(f2.version(), 2u);
        QCOMPARE(f2.metadata().size(), f3.metadata().size());
        QCOMPARE(f2.get("tokenizer.ggml.tokens").strings(), f3.get("tokenizer.ggml.tokens").strings());
        QCOMPARE(f2.tensor("t").offset, f3.tensor("t").offset);
        QCOMPARE(f2.dataOffset(), f3.dataOffset());
    }

    void writerRefusesBadInput() {
        QVERIFY_THROWS_EXCEPTION(Error, gguf::Writer(16 + 8));
        QVERIFY_THROWS_EXCEPTION(Error, gguf::Writer(4));
        gguf::Writer w;
        QVERIFY_THROWS_EXCEPTION(Error, w.setUInt32("general.alignment", 12));
        QVERIFY_THROWS_EXCEPTION(Error, w.setUInt64("general.alignment", 64));
        QVERIFY_THROWS_EXCEPTION(Error, w.setString("", "x"));
        QVERIFY_THROWS_EXCEPTION(Error, w.setArray("x", gguf::ValueType::UInt32, 3, Bytes(8)));
        QVERIFY_THROWS_EXCEPTION(Error, w.setArray("x", gguf::ValueType::String, 0, {}));
        w.addTensor("t", TensorType::F32, {2}, Bytes(8));
        QVERIFY_THROWS_EXCEPTION(Error, w.addTensor("t", TensorType::F32, {2}, Bytes(8)));
        QVERIFY_THROWS_EXCEPTION(Error, w.addTensor("u", TensorType::F32, {2}, Bytes(7)));
        QVERIFY_THROWS_EXCEPTION(Error, w.addTensor("q", TensorType::Q4_0, {16}, Bytes(9)));
        QVERIFY_THROWS_EXCEPTION(Error, w.addTensor("n", TensorType::F32, {-1}, Bytes{}));
        QVERIFY_THROWS_EXCEPTION(Error, w.addTensor(std::string(65, 'x'), TensorType::F32, {1}, Bytes(4)));
        QVERIFY_THROWS_EXCEPTION(Error, w.addTensor("d", TensorType::F32, {1, 1, 1, 1, 1}, Bytes(4)));
        // Refused tensors leave nothing behind.
        auto bytes = w.toBytes();
        auto f = parsed(bytes);
        QCOMPARE(f.tensors().size(), size_t(1));
    }

    void setReplacesInPlaceAndRemove() {
        gguf::Writer w;
        w.setUInt32("a", 1);
        w.setUInt32("b", 2);
        w.setString("a", "again");
        w.setUInt32("c", 3);
        w.remove("b");
        auto bytes = w.toBytes();
        auto f = parsed(bytes);
        QCOMPARE(f.metadata().size(), size_t(2));
        QCOMPARE(f.metadata()[0].key(), std::string_view("a"));
        QCOMPARE(f.getString("a"), std::string_view("again"));
        QCOMPARE(f.metadata()[1].key(), std::string_view("c"));
    }

    void writeToFileMatchesToBytes() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        gguf::Writer w(64);
        w.setString("general.architecture", "llama");
        w.addTensor("a", TensorType::F32, {3}, asBytes({1, 2, 3}));
        w.addTensor("b", TensorType::F32, {5}, [](std::span<uint8_t> out) {
            for (size_t i = 0; i < out.size(); ++i) out[i] = uint8_t(i);
        });
        std::string path = dir.filePath("w.gguf").toStdString();
        w.write(path);
        QVERIFY(!std::filesystem::exists(path + ".partial"));
        auto onDisk = readFile(path);
        auto inMemory = w.toBytes();
        QCOMPARE(onDisk.size(), inMemory.size());
        QVERIFY(std::memcmp(onDisk.data(), inMemory.data(), inMemory.size()) == 0);
        auto f = gguf::File::open(path);
        QCOMPARE(f.fileSize(), uint64_t(inMemory.size()));
        QCOMPARE(f.tensor("b").data[19], uint8_t(19));
    }

    void openReportsMissingAndNonRegularFiles() {
        QTemporaryDir dir;
        try {
            gguf::File::open(dir.filePath("absent.gguf").toStdString());
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("cannot open") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(Error, gguf::File::open(dir.path().toStdString()));
    }
};

QTEST_APPLESS_MAIN(TestGgufWriterReader)
#include "test_gguf_writer_reader.moc"
