// Round trip through our writer and reader, on an in-memory file.
#include "cairn/error.h"
#include "cairn/gguf.h"

#include <QTest>

using namespace cairn;

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
        w.addTensor("x.weight", TensorType::F32, {64, 3},
                    {reinterpret_cast<const uint8_t*>(data.data()), data.size() * 4});
        auto bytes = w.toBytes();
        auto f = gguf::File::fromMemory(bytes.data(), bytes.size(), "memory");

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
    }

    void rejectsWrongMagic() {
        std::vector<uint8_t> bytes = {'G', 'G', 'U', 'X', 3, 0, 0, 0};
        QVERIFY_THROWS_EXCEPTION(Error, gguf::File::fromMemory(bytes.data(), bytes.size(), "m"));
    }
};

QTEST_APPLESS_MAIN(TestGgufWriterReader)
#include "test_gguf_writer_reader.moc"
