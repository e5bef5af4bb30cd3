// The hub client and the downloader against the loopback mock hub
// (mock_hub.h): search and listing, a download with its redirect (the token
// never goes to the storage host), a connection dropped mid-file then
// resumed with Range, pause and resume across a restart (a new Downloader),
// a server that ignores Range, a wrong checksum, 401 / 403 / 404, a split
// set fetched and moved as a set, the disk-space check, cancel, a queue,
// malformed and oversized replies, an unreachable hub.
#include "mock_hub.h"

#include "downloader.h"
#include "hub_client.h"

#include "cairn/gguf.h"

#include <QDir>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>

using namespace cairn::hub;
using cairn::test::MockFile;
using cairn::test::MockHub;
using cairn::test::MockRepo;

namespace {

// A GGUF header (llama, 4 layers) followed by filler: what a peek reads first.
std::string ggufContent(const char* arch, size_t total, uint32_t seed) {
    cairn::gguf::Writer w;
    w.setString("general.architecture", arch);
    w.setUInt32(std::string(arch) + ".block_count", 4);
    w.setUInt32(std::string(arch) + ".embedding_length", 256);
    w.setUInt32(std::string(arch) + ".attention.head_count", 8);
    const auto header = w.toBytes();
    std::string s(reinterpret_cast<const char*>(header.data()), header.size());
    return s + cairn::test::fillerBytes(total - s.size(), seed);
}

std::vector<HubFile> listFiles(HubClient& client, const QString& repo, QString* error = nullptr) {
    std::vector<HubFile> out;
    bool done = false;
    client.listFiles(repo, [&](std::vector<HubFile> files, QString e) {
        out = std::move(files);
        if (error) *error = e;
        done = true;
    });
    QElapsedTimer t;
    t.start();
    while (!done && t.elapsed() < 20000) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return out;
}

const HubFile& byName(const std::vector<HubFile>& files, const QString& name) {
    for (const auto& f : files)
        if (f.localName == name) return f;
    static HubFile none;
    return none;
}

bool ended(const Downloader& d, int id) {
    const auto* j = d.job(id);
    return j && (j->state == JobState::Done || j->state == JobState::Failed || j->state == JobState::Cancelled);
}

QStringList entries(const QString& dir) { return QDir(dir).entryList(QDir::Files | QDir::Hidden); }

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestHubDownload : public QObject {
    Q_OBJECT

    MockHub* hub_ = nullptr;
    std::unique_ptr<MockHub> owned_;

    MockHub& hub() { return *hub_; }
    void startHub(std::vector<MockRepo> repos) {
        owned_ = std::make_unique<MockHub>();
        hub_ = owned_.get();
        hub_->repos = std::move(repos);
        hub_->start();
    }

private slots:
    void cleanup() { owned_.reset(); }

    void searchAndList() {
        startHub({{"org/Small-GGUF", 900, 12, {}, {{"small-Q4_0.gguf", ggufContent("llama", 300000, 1)}}},
                  {"org/Other-GGUF", 5, 1, {}, {}}});
        HubClient client(QString::fromStdString(hub().url()));
        std::vector<HubRepo> repos;
        QString error = QStringLiteral("pending");
        client.search(QStringLiteral("small model"), SearchSort::Likes, 7, [&](std::vector<HubRepo> r, QString e) {
            repos = std::move(r);
            error = e;
        });
        QTRY_VERIFY_WITH_TIMEOUT(error != QLatin1String("pending"), 20000);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(repos.size(), size_t(2));
        QCOMPARE(repos[0].downloads, 900);
        QCOMPARE(repos[1].lastModified, QStringLiteral("2025-03-02T10:00:00.000Z"));  // asked for with expand[]
        QCOMPARE(QString::fromStdString(hub().lastSearchQuery()),
                 QStringLiteral("search=small model&filter=gguf&sort=likes&direction=-1"));

        const auto files = listFiles(client, QStringLiteral("org/Small-GGUF"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(files.size(), size_t(1));
        QCOMPARE(files[0].quantization, QStringLiteral("Q4_0"));
        QCOMPARE(files[0].sha256, QString::fromStdString(cairn::test::sha256Hex(hub().repos[0].files[0].content)));

        // The header peek: a ranged request for the first bytes only.
        hub().clearLog();
        GgufPeek peek;
        error = QStringLiteral("pending");
        client.peekHeader(QStringLiteral("org/Small-GGUF"), files[0], [&](GgufPeek p, QString e) {
            peek = std::move(p);
            error = e;
        });
        QTRY_VERIFY_WITH_TIMEOUT(error != QLatin1String("pending"), 20000);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(peek.architecture, QStringLiteral("llama"));
        QCOMPARE(peek.integers.at("llama.block_count"), 4);
        const auto log = hub().log();
        QVERIFY(!log.empty());
        QCOMPARE(QString::fromStdString(log.back().range), QStringLiteral("bytes=0-%1").arg(kPeekBytes - 1));

        listFiles(client, QStringLiteral("org/Nope"), &error);
        QVERIFY2(error.contains(QLatin1String("not found on the hub (404)")), qPrintable(error));
    }

    void downloadVerifiesAndKeepsTheTokenAtHome() {
        const std::string content = ggufContent("llama", 700000, 2);
        startHub({{"org/Repo", 1, 1, {}, {{"model-Q8_0.gguf", content}}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        client.setToken(QStringLiteral("secret-token"));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Repo"));
        QCOMPARE(files.size(), size_t(1));
        hub().clearLog();
        QString refusal;
        const int id = d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), &refusal);
        QVERIFY2(id > 0, qPrintable(refusal));
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->state == JobState::Done, qPrintable(d.job(id)->error));
        QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("model-Q8_0.gguf")});
        QCOMPARE(readAll(dir.filePath(QStringLiteral("model-Q8_0.gguf"))), QByteArray::fromStdString(content));
        QCOMPARE(d.job(id)->paths, QStringList{dir.filePath(QStringLiteral("model-Q8_0.gguf"))});
        const auto log = hub().log();
        QCOMPARE(log.size(), size_t(2));  // resolve, then the storage host it redirects to
        QCOMPARE(QString::fromStdString(log[0].authorization), QStringLiteral("Bearer secret-token"));
        QVERIFY(QString::fromStdString(log[1].host).startsWith(QLatin1String("localhost")));
        QVERIFY(log[1].authorization.empty());
        // The same name again is refused: it is already there.
        QVERIFY(d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), &refusal) < 0);
        QVERIFY(refusal.contains(QLatin1String("already in")));
    }

    void droppedConnectionResumesWithRange() {
        const std::string content = ggufContent("llama", 1500000, 3);
        MockFile f{"m-Q4_K_M.gguf", content};
        f.dropAfter = 600000;
        startHub({{"org/Repo", 1, 1, {}, {f}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Repo"));
        const int id = d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        const DownloadJob* job = d.job(id);
        QCOMPARE(job->state, JobState::Failed);
        QVERIFY(job->resumable);
        QVERIFY2(!job->error.isEmpty() && !job->error.contains(QLatin1Char('\n')), qPrintable(job->error));
        QVERIFY2(job->error.startsWith(QLatin1String("m-Q4_K_M.gguf:")), qPrintable(job->error));
        const QString part = Downloader::partPath(dir.path(), files[0]);
        QCOMPARE(QFileInfo(part).size(), 600000);
        QCOMPARE(readAll(part), QByteArray::fromStdString(content.substr(0, 600000)));

        hub().clearLog();
        d.resume(id);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->state == JobState::Done, qPrintable(d.job(id)->error));
        QCOMPARE(readAll(dir.filePath(QStringLiteral("m-Q4_K_M.gguf"))), QByteArray::fromStdString(content));
        QVERIFY(!QFileInfo::exists(part));
        const auto log = hub().log();
        QCOMPARE(QString::fromStdString(log.back().range), QStringLiteral("bytes=600000-"));
    }

    void pauseThenResumeAfterRestart() {
        const std::string content = ggufContent("llama", 2000000, 4);
        MockFile f{"slow-Q4_0.gguf", content};
        f.delayMsPerChunk = 40;  // 64 KiB per 40 ms: ~1.2 s in all
        startHub({{"org/Repo", 1, 1, {}, {f}}});
        QTemporaryDir dir;
        std::vector<HubFile> files;
        qint64 kept = 0;
        {
            HubClient client(QString::fromStdString(hub().url()));
            Downloader d(&client);
            files = listFiles(client, QStringLiteral("org/Repo"));
            const int id = d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), nullptr);
            QTRY_VERIFY_WITH_TIMEOUT(d.job(id)->done > 200000, 20000);
            d.pause(id);
            QTRY_COMPARE_WITH_TIMEOUT(d.job(id)->state, JobState::Paused, 10000);
            kept = QFileInfo(Downloader::partPath(dir.path(), files[0])).size();
            QVERIFY(kept > 0 && kept < qint64(content.size()));
            QCOMPARE(d.job(id)->done, kept);
        }  // the app quits
        hub().clearLog();
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const int id = d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), nullptr, /*paused=*/true);
        QCOMPARE(d.job(id)->state, JobState::Paused);
        QCOMPARE(d.job(id)->done, kept);  // the restored job shows the bytes it has
        d.resume(id);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->state == JobState::Done, qPrintable(d.job(id)->error));
        QCOMPARE(readAll(dir.filePath(QStringLiteral("slow-Q4_0.gguf"))), QByteArray::fromStdString(content));
        QCOMPARE(QString::fromStdString(hub().log().back().range), QStringLiteral("bytes=%1-").arg(kept));
    }

    void serverIgnoringRangeStartsOver() {
        const std::string content = ggufContent("llama", 400000, 5);
        MockFile f{"x-Q4_0.gguf", content};
        f.ignoreRange = true;
        startHub({{"org/Repo", 1, 1, {}, {f}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Repo"));
        // Bytes from an earlier attempt (wrong ones: a 200 answer means they are rewritten).
        QFile part(Downloader::partPath(dir.path(), files[0]));
        QVERIFY(part.open(QIODevice::WriteOnly));
        part.write(QByteArray(1000, 'z'));
        part.close();
        const int id = d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->state == JobState::Done, qPrintable(d.job(id)->error));
        QCOMPARE(readAll(dir.filePath(QStringLiteral("x-Q4_0.gguf"))), QByteArray::fromStdString(content));
        QCOMPARE(QString::fromStdString(hub().log().back().range), QStringLiteral("bytes=1000-"));
    }

    void wrongChecksumRemovesTheFile() {
        MockFile f{"bad-Q4_0.gguf", ggufContent("llama", 300000, 6)};
        f.listedSha = std::string(64, '0');
        startHub({{"org/Repo", 1, 1, {}, {f}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const int id =
            d.enqueue(QStringLiteral("org/Repo"), listFiles(client, QStringLiteral("org/Repo")), dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        const DownloadJob* job = d.job(id);
        QCOMPARE(job->state, JobState::Failed);
        QVERIFY2(job->error.contains(QLatin1String("checksum mismatch")) &&
                     job->error.contains(QLatin1String("removed")),
                 qPrintable(job->error));
        QVERIFY(!job->resumable);
        QCOMPARE(entries(dir.path()), QStringList());
    }

    void gatedRepositoryNeedsItsToken() {
        startHub({{"org/Gated", 1, 1, "good-token", {{"g-Q4_0.gguf", ggufContent("llama", 200000, 7)}}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Gated"));
        QCOMPARE(files.size(), size_t(1));
        int id = d.enqueue(QStringLiteral("org/Gated"), files, dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->error.contains(QLatin1String("(401)")) && d.job(id)->error.contains(QLatin1String("token")),
                 qPrintable(d.job(id)->error));
        d.forget(id);
        client.setToken(QStringLiteral("wrong"));
        id = d.enqueue(QStringLiteral("org/Gated"), files, dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->error.contains(QLatin1String("access denied (403)")), qPrintable(d.job(id)->error));
        d.forget(id);
        QCOMPARE(entries(dir.path()), QStringList());
        client.setToken(QStringLiteral("good-token"));
        id = d.enqueue(QStringLiteral("org/Gated"), files, dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->state == JobState::Done, qPrintable(d.job(id)->error));
    }

    void missingFileIs404() {
        MockFile f{"gone-Q4_0.gguf", ggufContent("llama", 200000, 8)};
        f.missing = true;
        startHub({{"org/Repo", 1, 1, {}, {f}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const int id =
            d.enqueue(QStringLiteral("org/Repo"), listFiles(client, QStringLiteral("org/Repo")), dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QCOMPARE(d.job(id)->error, QStringLiteral("org/Repo/gone-Q4_0.gguf: not found on the hub (404)"));
        QCOMPARE(entries(dir.path()), QStringList());
    }

    void splitSetIsOneDownload() {
        std::vector<MockFile> parts;
        for (int i = 1; i <= 3; ++i)
            parts.push_back({"Q8_0/big-Q8_0-0000" + std::to_string(i) + "-of-00003.gguf",
                             cairn::test::fillerBytes(150000 + i, uint32_t(10 + i))});
        startHub({{"org/Split", 1, 1, {}, parts}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Split"));
        QCOMPARE(files.size(), size_t(3));
        const auto set = splitSet(files, byName(files, QStringLiteral("big-Q8_0-00002-of-00003.gguf")));
        QCOMPARE(set.size(), size_t(3));
        const int id = d.enqueue(QStringLiteral("org/Split"), set, dir.path(), nullptr);
        QCOMPARE(d.job(id)->total, qint64(150001 + 150002 + 150003));
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->state == JobState::Done, qPrintable(d.job(id)->error));
        QCOMPARE(entries(dir.path()),
                 (QStringList{"big-Q8_0-00001-of-00003.gguf", "big-Q8_0-00002-of-00003.gguf",
                              "big-Q8_0-00003-of-00003.gguf"}));
        for (int i = 0; i < 3; ++i)
            QCOMPARE(readAll(dir.filePath(set[size_t(i)].localName)),
                     QByteArray::fromStdString(parts[size_t(i)].content));
    }

    void splitSetWithABadPartMovesNothing() {
        std::vector<MockFile> parts;
        for (int i = 1; i <= 3; ++i)
            parts.push_back(
                {"s-Q4_0-0000" + std::to_string(i) + "-of-00003.gguf", cairn::test::fillerBytes(100000, uint32_t(i))});
        parts[2].listedSha = std::string(64, 'f');
        startHub({{"org/Split", 1, 1, {}, parts}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Split"));
        const int id = d.enqueue(QStringLiteral("org/Split"), splitSet(files, files[0]), dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QCOMPARE(d.job(id)->state, JobState::Failed);
        QVERIFY(d.job(id)->error.contains(QLatin1String("s-Q4_0-00003-of-00003.gguf: checksum mismatch")));
        // The good parts stay as .part (resumable); none took its name.
        QCOMPARE(entries(dir.path()),
                 (QStringList{"s-Q4_0-00001-of-00003.gguf.part", "s-Q4_0-00002-of-00003.gguf.part"}));
        d.cancel(id);  // a failed job can still be cancelled: its parts go
        QCOMPARE(entries(dir.path()), QStringList());
    }

    void notEnoughDiskSpace() {
        startHub({{"org/Repo", 1, 1, {}, {{"m-Q4_0.gguf", ggufContent("llama", 300000, 9)}}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        d.setFreeSpaceProbe([](const QString&) { return qint64(10) << 20; });
        const auto files = listFiles(client, QStringLiteral("org/Repo"));
        hub().clearLog();
        const int id = d.enqueue(QStringLiteral("org/Repo"), files, dir.path(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, id), 30000);
        QVERIFY2(d.job(id)->error.startsWith(QLatin1String("not enough disk space in")), qPrintable(d.job(id)->error));
        QVERIFY(hub().log().empty());  // nothing was requested
        QCOMPARE(entries(dir.path()), QStringList());
    }

    void cancelAndQueue() {
        MockFile slow{"a-Q4_0.gguf", ggufContent("llama", 2000000, 10)};
        slow.delayMsPerChunk = 20;
        startHub({{"org/Repo",
                   1,
                   1,
                   {},
                   {slow,
                    {"b-Q4_0.gguf", ggufContent("llama", 100000, 11)},
                    {"c-Q4_0.gguf", ggufContent("llama", 100000, 12)}}}});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        const auto files = listFiles(client, QStringLiteral("org/Repo"));
        const int a = d.enqueue(QStringLiteral("org/Repo"), {byName(files, "a-Q4_0.gguf")}, dir.path(), nullptr);
        const int b = d.enqueue(QStringLiteral("org/Repo"), {byName(files, "b-Q4_0.gguf")}, dir.path(), nullptr);
        const int c = d.enqueue(QStringLiteral("org/Repo"), {byName(files, "c-Q4_0.gguf")}, dir.path(), nullptr);
        QCOMPARE(d.job(b)->state, JobState::Queued);  // one at a time
        d.pause(c);
        QCOMPARE(d.job(c)->state, JobState::Paused);
        QTRY_VERIFY_WITH_TIMEOUT(d.job(a)->done > 100000, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(d.job(a)->bytesPerSecond > 0 && d.job(a)->secondsLeft >= 0, 10000);
        d.cancel(a);
        QTRY_COMPARE_WITH_TIMEOUT(d.job(a)->state, JobState::Cancelled, 10000);
        QVERIFY(!QFileInfo::exists(Downloader::partPath(dir.path(), byName(files, "a-Q4_0.gguf"))));
        QTRY_VERIFY_WITH_TIMEOUT(ended(d, b), 30000);
        QCOMPARE(d.job(b)->state, JobState::Done);
        QCOMPARE(d.job(c)->state, JobState::Paused);  // paused in the queue: not started
        QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("b-Q4_0.gguf")});
    }

    void refusedBeforeAnyRequest() {
        startHub({});
        QTemporaryDir dir;
        HubClient client(QString::fromStdString(hub().url()));
        Downloader d(&client);
        HubFile f;
        f.path = f.localName = QStringLiteral("x.gguf");
        f.size = 10;
        QString refusal;
        QVERIFY(d.enqueue(QStringLiteral("o/r"), {f}, dir.path(), &refusal) < 0);  // no checksum
        QVERIFY(refusal.contains(QLatin1String("no SHA-256")));
        f.sha256 = QString(64, QLatin1Char('a'));
        f.path = QStringLiteral("../x.gguf");
        QVERIFY(d.enqueue(QStringLiteral("o/r"), {f}, dir.path(), &refusal) < 0);  // built by hand, checked again
        QVERIFY(refusal.contains(QLatin1String("not a plain file name")));
        f.path = QStringLiteral("x.gguf");
        f.localName = QStringLiteral("../../x.gguf");
        QVERIFY(d.enqueue(QStringLiteral("o/r"), {f}, dir.path(), &refusal) < 0);
        QVERIFY(d.jobs().empty());
        QVERIFY(hub().log().empty());
    }

    void hostileReplies() {
        startHub({});
        HubClient client(QString::fromStdString(hub().url()));
        QString error;
        hub().treeOverride = "[{\"type\":\"file\",\"path\":";
        listFiles(client, QStringLiteral("o/r"), &error);
        QVERIFY2(error.contains(QLatin1String("not valid JSON")), qPrintable(error));
        hub().treeOverride = std::string(size_t(kMaxApiReplyBytes) + 10, ' ');
        listFiles(client, QStringLiteral("o/r"), &error);
        QVERIFY2(error.contains(QLatin1String("larger than")), qPrintable(error));
        listFiles(client, QStringLiteral("../../etc"), &error);
        QVERIFY2(error.contains(QLatin1String("not a repository name")), qPrintable(error));
    }

    void unreachableHub() {
        QTcpServer probe;  // a port that was free a moment ago and is closed now
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close();
        HubClient client(QStringLiteral("http://127.0.0.1:%1").arg(port));
        QString error;
        listFiles(client, QStringLiteral("o/r"), &error);
        QVERIFY2(error.startsWith(QLatin1String("o/r: network failure talking to 127.0.0.1:")), qPrintable(error));
        QVERIFY(!error.contains(QLatin1Char('\n')));
    }
};

QTEST_GUILESS_MAIN(TestHubDownload)
#include "test_hub_download.moc"
