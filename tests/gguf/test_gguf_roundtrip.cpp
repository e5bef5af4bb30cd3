// Round trip of every shared fixture and vocabulary through our Writer: every
// key copied in order, every tensor added with its bytes. The rewritten file
// must read identically (keys, types, values, tensor names, types, shapes and
// bytes) and, since the originals were written in the canonical layout
// (gguf-py / ggml), be byte-identical to the original.
#include "gguf_bytes.h"
#include "shared_data.h"

#include <QTest>

#include <algorithm>
#include <filesystem>

using namespace cairn;
using namespace cairn::test;

namespace {

std::vector<std::string> sharedGgufFiles() {
    std::vector<std::string> files;
    for (const char* dir : {"fixtures", "vocab"})
        for (const auto& e : std::filesystem::directory_iterator(sharedPath(dir)))
            if (e.path().extension() == ".gguf") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

// The bytes a value occupies after its type field, as stored.
std::span<const uint8_t> payload(const gguf::Value& v) {
    if (v.isArray()) return v.rawArray();
    if (v.type() == gguf::ValueType::String)
        return {reinterpret_cast<const uint8_t*>(v.asString().data()), v.asString().size()};
    return {};
}

}  // namespace

class TestGgufRoundTrip : public QObject {
    Q_OBJECT
private slots:
    void rewrittenFilesReadIdentically_data() {
        QTest::addColumn<QString>("path");
        for (const auto& f : sharedGgufFiles())
            QTest::newRow(std::filesystem::path(f).filename().string().c_str()) << QString::fromStdString(f);
    }

    void rewrittenFilesReadIdentically() {
        QFETCH(QString, path);
        auto a = gguf::File::open(path.toStdString());

        gguf::Writer w(a.alignment());
        for (const auto& v : a.metadata()) w.copyValue(v);
        for (const auto& t : a.tensors()) {
            std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.nDims);
            w.addTensor(std::string(t.name), t.type, ne, std::span<const uint8_t>(t.data, t.nbytes));
        }
        auto bytes = w.toBytes();
        auto b = gguf::File::fromMemory(bytes.data(), bytes.size(), "rewritten");

        QCOMPARE(b.version(), 3u);
        QCOMPARE(b.alignment(), a.alignment());
        QCOMPARE(b.metadata().size(), a.metadata().size());
        for (size_t i = 0; i < a.metadata().size(); ++i) {
            const auto& va = a.metadata()[i];
            const auto& vb = b.metadata()[i];
            QCOMPARE(vb.key(), va.key());
            QCOMPARE(vb.type(), va.type());
            if (va.isArray()) {
                QCOMPARE(vb.elementType(), va.elementType());
                QCOMPARE(vb.size(), va.size());
            }
            auto pa = payload(va), pb = payload(vb);
            QVERIFY2(std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()), std::string(va.key()).c_str());
            if (va.isNumber()) QCOMPARE(vb.asFloat(), va.asFloat());
            if (va.type() == gguf::ValueType::Bool) QCOMPARE(vb.asBool(), va.asBool());
            if (va.isArray() && va.elementType() == gguf::ValueType::String) QCOMPARE(vb.strings(), va.strings());
        }
        QCOMPARE(b.tensors().size(), a.tensors().size());
        for (size_t i = 0; i < a.tensors().size(); ++i) {
            const auto& ta = a.tensors()[i];
            const auto& tb = b.tensors()[i];
            QCOMPARE(tb.name, ta.name);
            QCOMPARE(tb.type, ta.type);
            QCOMPARE(tb.nDims, ta.nDims);
            QCOMPARE(tb.ne, ta.ne);
            QCOMPARE(tb.nbytes, ta.nbytes);
            QVERIFY2(std::memcmp(tb.data, ta.data, ta.nbytes) == 0, std::string(ta.name).c_str());
        }

        // The canonical layout: the rewrite is the original, byte for byte.
        // One freedom remains: a file without tensors may or may not be padded
        // after its metadata (ggml and gguf-py's full writer pad, gguf-py's
        // vocab-only path does not; our writer does not). There the original
        // may only add zero bytes up to the alignment.
        uint64_t compared = bytes.size();
        if (a.tensors().empty() && a.fileSize() != bytes.size()) {
            QCOMPARE(a.fileSize(), (uint64_t(bytes.size()) + a.alignment() - 1) / a.alignment() * a.alignment());
            QVERIFY(std::all_of(a.base() + bytes.size(), a.base() + a.fileSize(), [](uint8_t c) { return c == 0; }));
            qInfo("%s: identical apart from the %llu padding bytes after the metadata", qPrintable(path),
                  (unsigned long long)(a.fileSize() - bytes.size()));
        } else {
            QCOMPARE(uint64_t(bytes.size()), a.fileSize());
        }
        auto mismatch = std::mismatch(bytes.begin(), bytes.begin() + long(compared), a.base());
        QVERIFY2(mismatch.first == bytes.end(),
                 ("first differing byte at " + std::to_string(mismatch.first - bytes.begin())).c_str());
    }
};

CAIRN_CONFORMANCE_MAIN(TestGgufRoundTrip)
#include "test_gguf_roundtrip.moc"
