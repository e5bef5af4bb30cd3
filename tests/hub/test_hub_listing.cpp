// What the hub answers, parsed without a network: the recorded shapes of
// /api/models and /api/models/{repo}/tree/main, hostile replies (malformed,
// oversized, wrong types, names that climb out of the folder), quantization
// and split names, the GGUF header peek on truncated and hostile bytes, and
// the app's list of architectures against the engine's own.
#include "gguf_peek.h"
#include "hub_listing.h"
#include "model_fit.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/model.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace cairn::hub;

namespace {

// Two entries of a real GET /api/models?search=qwen&filter=gguf answer (field
// names and types as the hub sends them; ids and figures shortened).
const char* kSearchReply = R"([
 {"_id":"66e9aa27a1b2c3d4e5f60718","id":"Qwen/Qwen2.5-0.5B-Instruct-GGUF","likes":104,"trendingScore":2,
  "private":false,"downloads":41287,"tags":["gguf","chat","text-generation","en"],"pipeline_tag":"text-generation",
  "library_name":"gguf","createdAt":"2024-09-17T14:12:05.000Z","modelId":"Qwen/Qwen2.5-0.5B-Instruct-GGUF"},
 {"_id":"670000000000000000000001","id":"meta-llama/Llama-Guard-3-1B-GGUF","likes":7,"private":false,"downloads":12,
  "tags":["gguf"],"gated":"manual","lastModified":"2024-10-01T08:00:00.000Z","createdAt":"2024-09-25T00:00:00.000Z",
  "modelId":"meta-llama/Llama-Guard-3-1B-GGUF"}
])";

// Entries of GET /api/models/{repo}/tree/main: a small git file, a directory,
// LFS files (oid is git's, lfs.oid the SHA-256), a split set in a folder.
const char* kTreeReply = R"([
 {"type":"file","oid":"a6344aac8c09253b3b630fb776ae94478aa0275b","size":1519,"path":".gitattributes"},
 {"type":"directory","oid":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","size":0,"path":"Q8_0"},
 {"type":"file","oid":"9e0b0b5b2d3f","size":491400032,"lfs":{"oid":"74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db","size":491400032,"pointerSize":135},"xetHash":"0f1e","path":"qwen2.5-0.5b-instruct-q4_k_m.gguf"},
 {"type":"file","oid":"1d2c","size":1000,"lfs":{"oid":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","size":1000,"pointerSize":130},"path":"Q8_0/model-Q8_0-00002-of-00002.gguf"},
 {"type":"file","oid":"1d2b","size":2000,"lfs":{"oid":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","size":2000,"pointerSize":130},"path":"Q8_0/model-Q8_0-00001-of-00002.gguf"},
 {"type":"file","oid":"77","size":5174,"path":"README.md"}
])";

}  // namespace

class TestHubListing : public QObject {
    Q_OBJECT
private slots:
    void searchReplyShape() {
        const auto repos = parseSearchReply(kSearchReply);
        QCOMPARE(repos.size(), size_t(2));
        QCOMPARE(repos[0].id, QStringLiteral("Qwen/Qwen2.5-0.5B-Instruct-GGUF"));
        QCOMPARE(repos[0].downloads, 41287);
        QCOMPARE(repos[0].likes, 104);
        QVERIFY(!repos[0].gated);
        QVERIFY(repos[1].gated);
        QCOMPARE(repos[1].lastModified, QStringLiteral("2024-10-01T08:00:00.000Z"));
    }

    void searchReplyHostile() {
        QVERIFY_THROWS_EXCEPTION(cairn::Error, parseSearchReply("[{\"id\": \"a/b\""));
        QVERIFY_THROWS_EXCEPTION(cairn::Error, parseSearchReply("{\"error\": \"x\"}"));
        QVERIFY_THROWS_EXCEPTION(cairn::Error, parseSearchReply(""));
        QVERIFY_THROWS_EXCEPTION(cairn::Error, parseSearchReply(QByteArray(kMaxApiReplyBytes + 1, ' ')));
        // Deep nesting is parsed without recursion (nlohmann's parser is iterative): an error, no crash.
        QVERIFY_THROWS_EXCEPTION(cairn::Error, parseSearchReply(QByteArray(1 << 20, '[')));
        // Wrong types and unusable ids are skipped, the rest kept.
        const auto repos = parseSearchReply(R"([1, "x", {"id": 5}, {"id": "../../etc"}, {"id": "a/b/c"},
            {"id": "o/n", "downloads": -4, "likes": "many"}, {"id": "o/m", "downloads": 1e300}])");
        QCOMPARE(repos.size(), size_t(2));
        QCOMPARE(repos[0].id, QStringLiteral("o/n"));
        QCOMPARE(repos[0].downloads, 0);
        QCOMPARE(repos[0].likes, 0);
    }

    void treeReplyShape() {
        const auto files = parseTreeReply(kTreeReply);
        QCOMPARE(files.size(), size_t(3));  // .gitattributes, the directory and README are not GGUF files
        const HubFile& single = files[2];
        QCOMPARE(single.path, QStringLiteral("qwen2.5-0.5b-instruct-q4_k_m.gguf"));
        QCOMPARE(single.size, 491400032);
        QCOMPARE(single.sha256, QStringLiteral("74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db"));
        QCOMPARE(single.quantization, QStringLiteral("Q4_K_M"));
        QCOMPARE(single.splitCount, 0);
        QCOMPARE(files[0].path, QStringLiteral("Q8_0/model-Q8_0-00001-of-00002.gguf"));
        QCOMPARE(files[0].localName, QStringLiteral("model-Q8_0-00001-of-00002.gguf"));
        QCOMPARE(files[0].splitIndex, 1);
        QCOMPARE(files[0].splitCount, 2);
        QCOMPARE(files[0].quantization, QStringLiteral("Q8_0"));
        QCOMPARE(files[1].sha256, QString(64, QLatin1Char('a')));  // upper-case hex is read as lower-case

        const auto set = splitSet(files, files[1]);
        QCOMPARE(set.size(), size_t(2));
        QCOMPARE(set[0].splitIndex, 1);
        QCOMPARE(set[1].splitIndex, 2);
        QCOMPARE(splitSet(files, single).size(), size_t(1));
        std::vector<HubFile> partial = {files[1], single};
        QVERIFY_THROWS_EXCEPTION(cairn::Error, splitSet(partial, files[1]));
    }

    void treeNamesThatLeaveTheFolder() {
        const auto files = parseTreeReply(R"([
          {"type":"file","size":10,"path":"../evil.gguf","lfs":{"oid":"x","size":10}},
          {"type":"file","size":10,"path":"a/../../evil.gguf"},
          {"type":"file","size":10,"path":"/etc/evil.gguf"},
          {"type":"file","size":10,"path":"dir\\evil.gguf"},
          {"type":"file","size":10,"path":".hidden.gguf"},
          {"type":"file","size":10,"path":"a/)"
                                          R"(/b.gguf"},
          {"type":"file","size":10,"path":"bad\u0001name.gguf"},
          {"type":"file","size":10,"path":"c:evil.gguf"},
          {"type":"file","size":10,"path":".gguf"},
          {"type":"file","size":0,"path":"empty.gguf"},
          {"type":"file","size":-5,"path":"negative.gguf"},
          {"type":"file","size":"12","path":"string-size.gguf"},
          {"type":"file","size":10,"path":"not-gguf.bin"},
          {"type":"directory","size":10,"path":"folder.gguf"},
          {"type":"file","size":10,"path":"part-00003-of-00002.gguf"},
          {"type":"file","size":10,"path":"sub/ok-Q4_0.gguf","lfs":{"oid":"not-hex","size":10}}
        ])");
        QCOMPARE(files.size(), size_t(1));
        QCOMPARE(files[0].localName, QStringLiteral("ok-Q4_0.gguf"));
        QVERIFY(files[0].sha256.isEmpty());  // not 64 hex digits: no checksum, so the downloader refuses it
        QVERIFY(!safeLocalName(QStringLiteral("..")));
        QCOMPARE(*safeLocalName(QStringLiteral("x/y/z.GGUF")), QStringLiteral("z.GGUF"));
    }

    void quantizationNames() {
        const std::pair<const char*, const char*> cases[] = {
            {"qwen2.5-0.5b-instruct-q4_k_m.gguf", "Q4_K_M"},
            {"Llama-3.2-1B-Instruct-IQ4_XS.gguf", "IQ4_XS"},
            {"gemma-3-1b-it-BF16.gguf", "BF16"},
            {"model.F16.gguf", "F16"},
            {"Qwen3-0.6B-UD-Q8_K_XL.gguf", "Q8_K_XL"},
            {"m-Q8_0-00001-of-00003.gguf", "Q8_0"},
            {"tinyllama-1.1b.gguf", ""},
            {"ggml-model-q4_0.gguf", "Q4_0"},
        };
        for (const auto& [name, quant] : cases)
            QCOMPARE(quantizationOf(QString::fromLatin1(name)), QString::fromLatin1(quant));
    }

    void urls() {
        QCOMPARE(normalizeHubUrl(QStringLiteral(" https://hf-mirror.com/ ")), QStringLiteral("https://hf-mirror.com"));
        QVERIFY_THROWS_EXCEPTION(cairn::Error, normalizeHubUrl(QStringLiteral("ftp://x")));
        QVERIFY_THROWS_EXCEPTION(cairn::Error, normalizeHubUrl(QStringLiteral("huggingface.co")));
        const QUrl s =
            searchUrl(QStringLiteral("https://huggingface.co"), QStringLiteral("qwen 0.5b&x=1"), SearchSort::Likes, 20);
        QCOMPARE(s.path(), QStringLiteral("/api/models"));
        const QUrlQuery q(s);
        QCOMPARE(q.queryItemValue(QStringLiteral("search"), QUrl::FullyDecoded), QStringLiteral("qwen 0.5b&x=1"));
        QCOMPARE(q.queryItemValue(QStringLiteral("filter")), QStringLiteral("gguf"));
        QCOMPARE(q.queryItemValue(QStringLiteral("sort")), QStringLiteral("likes"));
        QCOMPARE(q.queryItemValue(QStringLiteral("x")), QString());
        QCOMPARE(q.allQueryItemValues(QStringLiteral("expand[]")),
                 (QStringList{"downloads", "likes", "lastModified", "gated"}));
        QCOMPARE(QUrlQuery(searchUrl(QStringLiteral("http://h"), {}, SearchSort::Updated, 5))
                     .queryItemValue(QStringLiteral("sort")),
                 QStringLiteral("lastModified"));
        QCOMPARE(fileUrl(QStringLiteral("https://h"), QStringLiteral("o/r"), QStringLiteral("Q8 0/a#b.gguf"))
                     .toString(QUrl::FullyEncoded),
                 QStringLiteral("https://h/o/r/resolve/main/Q8%200/a%23b.gguf"));
        QVERIFY(isValidRepoId(QStringLiteral("bartowski/Llama-3.2-1B-Instruct-GGUF")));
        QVERIFY(!isValidRepoId(QStringLiteral("a/..")));
        QVERIFY(!isValidRepoId(QStringLiteral("a/b?c")));
    }

    void peekTruncatedHeader() {
        cairn::gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setString("general.name", "Tiny");
        w.setUInt32("llama.block_count", 4);
        w.setUInt32("llama.embedding_length", 256);
        w.setUInt32("llama.attention.head_count", 8);
        w.setUInt32("llama.attention.head_count_kv", 2);
        w.setUInt32("llama.context_length", 2048);
        std::vector<std::string> tokens(20000, "token");
        w.setStrings("tokenizer.ggml.tokens", tokens);
        const auto bytes = w.toBytes();
        const QByteArray all(reinterpret_cast<const char*>(bytes.data()), qsizetype(bytes.size()));

        const GgufPeek whole = peekGguf(all, "x");
        QVERIFY(whole.complete);
        QCOMPARE(whole.architecture, QStringLiteral("llama"));
        QCOMPARE(whole.name, QStringLiteral("Tiny"));
        QCOMPARE(whole.integers.at("llama.block_count"), 4);
        // 4 layers × 2 KV heads × (32 + 32) values × 2 bytes × 1000 tokens.
        QCOMPARE(*kvCacheBytes(whole, 1000), uint64_t(4 * 2 * 64 * 2 * 1000));

        // Cut inside the token array: what came before is there.
        const GgufPeek cut = peekGguf(all.left(all.size() / 2), "x");
        QVERIFY(!cut.complete);
        QCOMPARE(cut.architecture, QStringLiteral("llama"));
        QCOMPARE(*kvCacheBytes(cut, 1000), *kvCacheBytes(whole, 1000));
        // Every prefix parses or throws a cairn::Error; none reads past its end.
        for (qsizetype n = 0; n < 400; ++n) {
            try {
                peekGguf(all.left(n), "x");
            } catch (const cairn::Error&) {}
        }
        QVERIFY_THROWS_EXCEPTION(cairn::Error, peekGguf("GGML\x03\0\0\0", "x"));
        QVERIFY_THROWS_EXCEPTION(cairn::Error, peekGguf(QByteArray("GGUF\x09\0\0\0", 8), "x"));
    }

    void peekHostileLengths() {
        // A key length of 2^63 and an array count of 2^62: the peek stops, nothing is allocated for them.
        QByteArray b("GGUF\x03\0\0\0", 8);
        b += QByteArray(8, '\0');  // tensors
        b += QByteArray("\x02\0\0\0\0\0\0\0", 8);  // two pairs
        b += QByteArray("\x04\0\0\0\0\0\0\0", 8) + "a.xy";
        b += QByteArray("\x09\0\0\0", 4) + QByteArray("\x04\0\0\0", 4) + QByteArray("\0\0\0\0\0\0\0\x40", 8);
        const GgufPeek p = peekGguf(b, "x");
        QVERIFY(!p.complete);
        QByteArray k("GGUF\x03\0\0\0", 8);
        k += QByteArray(8, '\0') + QByteArray("\x01\0\0\0\0\0\0\0", 8) + QByteArray("\0\0\0\0\0\0\0\x80", 8);
        QVERIFY(!peekGguf(k, "x").complete);
        // Sizes that make no sense give no estimate.
        GgufPeek silly;
        silly.architecture = QStringLiteral("llama");
        silly.integers = {
            {"llama.block_count", int64_t(1) << 40}, {"llama.embedding_length", 64}, {"llama.attention.head_count", 2}};
        QVERIFY(!kvCacheBytes(silly, 4096));
    }

    void fitLevels() {
        QCOMPARE(estimateFit(700, 1000), Fit::Fits);
        QCOMPARE(estimateFit(701, 1000), Fit::Tight);
        QCOMPARE(estimateFit(1000, 1000), Fit::Tight);
        QCOMPARE(estimateFit(1001, 1000), Fit::WontFit);
        QCOMPARE(estimateFit(5, 0), Fit::Unknown);
        QCOMPARE(fitLabel(Fit::WontFit), QStringLiteral("won't fit"));
    }

    // The app's list is the engine's registry: a file of an unknown
    // architecture is refused with the list of those it knows.
    void supportedArchitecturesMatchTheEngine() {
        QTemporaryDir dir;
        cairn::gguf::Writer w;
        w.setString("general.architecture", "nonesuch");
        const std::string path = (dir.path() + "/x.gguf").toStdString();
        w.write(path);
        QString message;
        try {
            cairn::Model::load(path);
        } catch (const cairn::Error& e) {
            message = QString::fromStdString(e.reason());
        }
        const auto m = QRegularExpression(QStringLiteral("\\(supported: ([^)]*)\\)")).match(message);
        QVERIFY2(m.hasMatch(), qPrintable(message));
        QCOMPARE(m.captured(1).split(QStringLiteral(", ")), supportedArchitectures());
        for (const auto& r : recommendedModels()) QVERIFY(isValidRepoId(r.repo));
    }
};

QTEST_GUILESS_MAIN(TestHubListing)
#include "test_hub_listing.moc"
