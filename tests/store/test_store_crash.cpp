// Crash safety: a child process writes conversations (messages, streamed
// partial text, finished replies, snapshots) and reports each write on a pipe
// only after its commit returned. It is killed with SIGKILL at a random moment,
// 50 times (fixed seed). After every kill the database must open, pass
// PRAGMA integrity_check and FTS5's integrity check, and hold every reported
// write (or a later version of it: the kill may fall between commit and report).
#include "cairn/store/store.h"
#include "store_test_util.h"

#include <QTest>

#include <chrono>
#include <csignal>
#include <poll.h>
#include <random>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <type_traits>
#include <unistd.h>

using namespace cairn;
using namespace cairn::store;

namespace {

constexpr int kRuns = 50;
constexpr int kFinalVersion = 3;  // versions 0..2 stream, 3 is the finished reply

// "K a b c": a report line (appending avoids GCC 12's -Wrestrict false positive on "lit" + string).
template <class... Args>
std::string fields(char kind, const Args&... args) {
    std::string out(1, kind);
    ((
         out += ' ',
         out +=
         [](const auto& a) {
             if constexpr (std::is_arithmetic_v<std::decay_t<decltype(a)>>) return std::to_string(a);
             else return std::string(a);
         }(args)),
     ...);
    return out;
}

std::string contentFor(int run, int step, char role, int version) {
    std::string text = fields('r', run, step, std::string(1, role), version) + " ";
    // Longer with every version, like a streaming reply; spans several pages.
    text.append(static_cast<size_t>(version) * 1500 + static_cast<size_t>(step % 7) * 100, char('a' + step % 26));
    return text;
}

std::vector<uint8_t> blobFor(int run, int step, size_t size) {
    std::vector<uint8_t> b(size);
    uint32_t x = static_cast<uint32_t>(run * 7919 + step * 104729 + 1);
    for (auto& byte : b) {
        x = x * 1664525u + 1013904223u;
        byte = static_cast<uint8_t>(x >> 24);
    }
    return b;
}

// The child: writes until killed. Never returns.
[[noreturn]] void writer(const std::string& path, int fd, int run, sql::Synchronous sync) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    auto report = [fd](const std::string& line) {
        const std::string l = line + "\n";
        if (::write(fd, l.data(), l.size()) != static_cast<ssize_t>(l.size())) _exit(3);
    };
    try {
        StoreOptions options;
        options.open.synchronous = sync;
        Store s(path, options);
        const int64_t conv = s.createConversation(fields('r', run));
        report(fields('C', conv));
        std::optional<int64_t> parent;
        for (int step = 0; step < 100000; ++step) {
            const int64_t u = s.addMessage(conv, parent, Role::User, contentFor(run, step, 'u', kFinalVersion));
            report(fields('M', u, run, step, "u", kFinalVersion));
            const int64_t a = s.addMessage(conv, u, Role::Assistant, contentFor(run, step, 'a', 0), false);
            report(fields('M', a, run, step, "a", 0));
            for (int v = 1; v < kFinalVersion; ++v) {
                s.updatePartial(a, contentFor(run, step, 'a', v));
                report(fields('M', a, run, step, "a", v));
            }
            s.finishMessage(a, contentFor(run, step, 'a', kFinalVersion), {.tokenCount = step});
            report(fields('M', a, run, step, "a", kFinalVersion));
            if (step % 4 == 0) {
                const size_t size = 4096 + static_cast<size_t>((run * 31 + step * 17) % 8) * 6000;
                const auto id = s.putSnapshot(blobFor(run, step, size), conv, a, "fp", step);
                if (!id) _exit(4);
                report(fields('S', *id, run, step, size));
            }
            parent = a;
        }
    } catch (const std::exception& e) {
        report(std::string("E ") + e.what());
        _exit(2);
    }
    _exit(0);
}

// Reads whatever arrives during `us` microseconds.
std::string readFor(int fd, int us) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::microseconds(us);
    std::string out;
    char buf[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
        if (left <= 0) break;
        pollfd p{fd, POLLIN, 0};
        const timespec ts{0, static_cast<long>(left) * 1000};
        if (::ppoll(&p, 1, &ts, nullptr) <= 0) continue;  // timed out: loop ends on the deadline check
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) {
            ::usleep(static_cast<useconds_t>(left));  // child gone early; the status check reports it
            break;
        }
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

// Waits (at most 10 s) for the child's first line.
std::string readLine(int fd) {
    std::string line;
    char ch = 0;
    while (line.empty() || line.back() != '\n') {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 10'000) <= 0 || ::read(fd, &ch, 1) != 1) break;
        line += ch;
    }
    return line;
}

std::string readAll(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) out.append(buf, static_cast<size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    return out;
}

}  // namespace

class TestStoreCrash : public QObject {
    Q_OBJECT
private slots:
    void killedWriterLeavesEveryCommitIntact() {
        test::TempDb tmp;
        const std::string path = tmp.path();
        std::mt19937 rng(20261129);
        std::uniform_int_distribution<int> delayUs(0, 60'000);
        int totalMessages = 0, totalSnapshots = 0, runsWithWrites = 0;

        for (int run = 0; run < kRuns; ++run) {
            int fds[2];
            QVERIFY(::pipe(fds) == 0);
            const pid_t pid = ::fork();  // no connection is open in this process now
            QVERIFY(pid >= 0);
            if (pid == 0) {
                ::close(fds[0]);
                // The app commits with FULL; NORMAL commits ~1000x faster, so
                // its kills land all over SQLite's write path instead of
                // mostly inside fsync. Both must keep every commit.
                writer(path, fds[1], run, run % 2 ? sql::Synchronous::Normal : sql::Synchronous::Full);
            }
            ::close(fds[1]);
            // Every 5th run is killed anywhere from the start (opening,
            // migrating); the others after the child is up and writing.
            std::string log;
            if (run % 5 != 0) log = readLine(fds[0]);
            log += readFor(fds[0], delayUs(rng));  // keeps the pipe drained so the child never blocks
            ::kill(pid, SIGKILL);
            int status = 0;
            QVERIFY(::waitpid(pid, &status, 0) == pid);
            log += readAll(fds[0]);
            ::close(fds[0]);
            QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                     ("child ended on its own, log: " + log.substr(0, 300)).c_str());

            Store s(path);
            QCOMPARE(s.database().integrityCheck(), std::string("ok"));
            test::ftsIntegrityCheck(s.database());

            std::istringstream lines(log);
            std::string line;
            int messages = 0, snapshots = 0;
            while (std::getline(lines, line)) {
                if (lines.eof()) break;  // a line cut short by the kill (no '\n') proves nothing
                std::istringstream f(line);
                char kind = 0;
                f >> kind;
                if (kind == 'C') {
                    int64_t conv = 0;
                    f >> conv;
                    QCOMPARE(s.conversation(conv).title, fields('r', run));
                } else if (kind == 'M') {
                    int64_t id = 0;
                    int r = 0, step = 0, version = 0;
                    char role = 0;
                    f >> id >> r >> step >> role >> version;
                    const Message m = s.message(id);
                    bool matches = false;
                    for (int v = version; v <= kFinalVersion; ++v) matches |= m.content == contentFor(r, step, role, v);
                    QVERIFY2(matches, (fields('m', id) + " lost its committed text").c_str());
                    if (version == kFinalVersion) {
                        QVERIFY(m.complete);
                        QCOMPARE(m.content, contentFor(r, step, role, kFinalVersion));
                    }
                    ++messages;
                } else if (kind == 'S') {
                    int64_t id = 0;
                    int r = 0, step = 0;
                    size_t size = 0;
                    f >> id >> r >> step >> size;
                    QVERIFY2(s.snapshotData(id) == blobFor(r, step, size), "snapshot bytes differ");
                    ++snapshots;
                } else {
                    QFAIL(("unexpected report: " + line).c_str());
                }
            }
            totalMessages += messages;
            totalSnapshots += snapshots;
            runsWithWrites += messages > 0;
        }
        qInfo("%d kills; %d runs had reported writes; verified %d message writes and %d snapshots", kRuns,
              runsWithWrites, totalMessages, totalSnapshots);
        // The kills must really land among writes, not only before the first one.
        QVERIFY(runsWithWrites >= kRuns / 2);
        QVERIFY(totalSnapshots > 0);
    }
};

QTEST_APPLESS_MAIN(TestStoreCrash)
#include "test_store_crash.moc"
