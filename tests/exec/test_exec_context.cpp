// ExecContext::parallelFor: every index exactly once in ranges of at most
// `grain` (one range on one thread), whichever thread runs it; workers asleep after a pause still wake
// (a lost wake-up hangs the test); errors reach the caller; a loop nested in
// another, and loops started by two threads at once, still cover everything;
// a hint of what the next loop reads is prefetched, never read.
#include "cairn/exec.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/mman.h>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace cairn;

namespace {

// Blocks a task until `seen` holds two threads or `patience` is over, so that
// a second thread of a working pool always gets a range even when a loaded
// machine schedules it late (without this the caller may finish every range
// first: seen in CI beside two compilers). A pool whose workers never wake
// still shows one thread, after the patience.
template <class Set>
void awaitSecondThread(std::mutex& m, const Set& seen, std::chrono::milliseconds patience) {
    const auto until = std::chrono::steady_clock::now() + patience;
    while (std::chrono::steady_clock::now() < until) {
        {
            std::lock_guard lock(m);
            if (seen.size() >= 2) return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

// Runs one loop and checks its cover; returns the threads that ran a range.
// With a patience, each range waits for a second thread (awaitSecondThread).
std::set<std::thread::id> coverOnce(ExecContext& ctx, int64_t n, int64_t grain, bool& ok,
                                    std::chrono::microseconds perItem = {}, std::chrono::milliseconds patience = {},
                                    const NextLoopReads& next = {}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::mutex m;
    std::set<std::thread::id> threads;
    std::atomic<bool> tooLong{false};
    ctx.parallelFor(n, grain, [&](int64_t b, int64_t e) {
        const bool split = ctx.threads() > 1 && n > grain;
        if ((split && e - b > grain) || b < 0 || e > n || b >= e) tooLong = true;
        for (int64_t i = b; i < e; ++i) {
            hits[size_t(i)]++;
            if (perItem.count()) {
                const auto until = std::chrono::steady_clock::now() + perItem;
                while (std::chrono::steady_clock::now() < until) {}
            }
        }
        {
            std::lock_guard lock(m);
            threads.insert(std::this_thread::get_id());
        }
        if (patience.count()) awaitSecondThread(m, threads, patience);
    }, next);
    ok = !tooLong;
    for (auto& h : hits) ok = ok && h.load() == 1;
    return threads;
}

}  // namespace

class TestExecContext : public QObject {
    Q_OBJECT
private slots:
    void everyIndexOnceInRangesOfAtMostGrain() {
        for (int threads : {1, 2, 3})
            for (int64_t n : {1, 2, 3, 7, 100, 1000})
                for (int64_t grain : {1, 3, 64, 2000}) {
                    ExecContext ctx(threads);
                    bool ok = false;
                    coverOnce(ctx, n, grain, ok);
                    QVERIFY2(ok, qPrintable(QStringLiteral("threads %1 n %2 grain %3").arg(threads).arg(n).arg(grain)));
                }
    }

    void workersWakeAfterAPause() {
        ExecContext ctx(2);
        int shared = 0;
        for (int i = 0; i < 40; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(i % 2 ? 5 : 0));  // past the spin: asleep
            bool ok = false;
            const auto threads = coverOnce(ctx, 8, 1, ok, std::chrono::microseconds(300), std::chrono::seconds(2));
            QVERIFY(ok);
            shared += threads.size() > 1;
        }
        QVERIFY2(shared == 40, qPrintable(QStringLiteral("the second thread ran in %1 of 40 loops").arg(shared)));
    }

    void anErrorReachesTheCallerAndTheTeamGoesOn() {
        ExecContext ctx(2);
        for (int i = 0; i < 3; ++i) {
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, ctx.parallelFor(100, 1, [](int64_t b, int64_t) {
                if (b == 57) throw std::runtime_error("item 57");
            }));
            bool ok = false;
            coverOnce(ctx, 100, 4, ok);
            QVERIFY(ok);
        }
    }

    // A layer watch reports before each layer but the first, is read after the
    // report (a callback that sets the flag stops the very next layer), and a
    // scoped watch puts the previous one back.
    void aLayerWatchReportsThenStops() {
        ExecContext ctx(1);
        ctx.atLayer(0, 4);  // no watch: nothing happens
        std::atomic<bool> stop{false};
        std::vector<int64_t> seen;
        LayerWatch outer;
        outer.onLayer = [&](int64_t layer, int64_t) { seen.push_back(-layer); };
        const ScopedLayerWatch outerScope(ctx, outer);
        {
            LayerWatch inner;
            inner.cancel = &stop;
            inner.onLayer = [&](int64_t layer, int64_t layers) {
                QCOMPARE(layers, int64_t(4));
                seen.push_back(layer);
                if (layer == 2) stop = true;
            };
            const ScopedLayerWatch innerScope(ctx, inner);
            ctx.atLayer(0, 4);
            ctx.atLayer(1, 4);
            QVERIFY_THROWS_EXCEPTION(Cancelled, ctx.atLayer(2, 4));
        }
        ctx.atLayer(3, 4);  // the outer watch again, with no flag
        QCOMPARE(seen, (std::vector<int64_t>{1, 2, -3}));
    }

    // The next loop's reads are only a hint to prefetch: loops with one that
    // points at memory no longer mapped, and the loops without one after them
    // (the threads go on prefetching the last hint in those), still cover
    // every index once, and nothing reads the memory (a load would fault).
    void aNextLoopHintIsOnlyPrefetched() {
        const size_t bytes = size_t(64) << 20;
        void* gone = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        QVERIFY(gone != MAP_FAILED);
        QCOMPARE(munmap(gone, bytes), 0);
        for (int threads : {2, 3}) {
            ExecContext ctx(threads);
            for (int i = 0; i < 30; ++i) {
                const NextLoopReads next{gone, bytes, i % 3 == 2 ? 0 : size_t(1) << 20};
                bool ok = false;
                coverOnce(ctx, 6, 1, ok, std::chrono::microseconds(i % 2 ? 200 : 0), {},
                          i % 2 ? next : NextLoopReads{});
                QVERIFY2(ok, qPrintable(QStringLiteral("threads %1 loop %2").arg(threads).arg(i)));
            }
        }
    }

    void aNestedLoopCoversItsRange() {
        ExecContext ctx(2);
        std::vector<std::atomic<int>> hits(16 * 50);
        ctx.parallelFor(16, 1, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                ctx.parallelFor(50, 7, [&](int64_t ib, int64_t ie) {
                    for (int64_t j = ib; j < ie; ++j) hits[size_t(i * 50 + j)]++;
                });
        });
        for (auto& h : hits) QCOMPARE(h.load(), 1);
    }

    // More ranges than a team's block word holds (ThreadTeam::kMaxRanges,
    // 2^22 - 1): the caller runs the loop itself, every index once.
    void aLoopOfMoreRangesThanTheTeamHoldsStillCovers() {
        ExecContext ctx(2);
        const int64_t n = (int64_t(1) << 22) + 3;
        std::vector<uint8_t> hits(static_cast<size_t>(n), 0);
        std::atomic<int64_t> longest{0};
        ctx.parallelFor(n, 1, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) hits[size_t(i)]++;
            if (e - b > longest.load()) longest = e - b;
        });
        QCOMPARE(longest.load(), int64_t(1));
        for (int64_t i = 0; i < n; ++i)
            if (hits[size_t(i)] != 1) QFAIL(qPrintable(QStringLiteral("index %1 ran %2 times").arg(i).arg(hits[size_t(i)])));
    }

    void twoCallersAtOnceBothCoverTheirLoops() {
        ExecContext ctx(2);
        std::atomic<int> bad{0};
        auto caller = [&] {
            for (int i = 0; i < 300; ++i) {
                bool ok = false;
                coverOnce(ctx, 37, 2, ok);
                bad += !ok;
            }
        };
        std::thread a(caller), b(caller);
        a.join();
        b.join();
        QCOMPARE(bad.load(), 0);
    }

    // Last: the workers it lowers stay lowered for the rest of the process.
    // A Normal context leaves every thread's nice alone; a Background one
    // lowers each thread that runs one of its tasks — the workers and the
    // thread that called — and no other thread.
    void backgroundLowersEveryThreadThatRunsATask() {
#if defined(__linux__)
        auto niceOf = [](long tid) { return getpriority(PRIO_PROCESS, id_t(tid)); };
        const long mainTid = syscall(SYS_gettid);
        const int before = niceOf(mainTid);
        QVERIFY2(before < kBackgroundNice, "the test already runs at background priority");
        auto record = [&](ExecContext& ctx) {
            std::mutex m;
            std::set<std::pair<long, int>> seen;  // (thread id, its nice while running a task)
            std::set<long> tids;
            ctx.parallelFor(16, 1, [&](int64_t, int64_t) {
                const long tid = syscall(SYS_gettid);
                {
                    std::lock_guard lock(m);
                    seen.insert({tid, niceOf(tid)});
                    tids.insert(tid);
                }
                awaitSecondThread(m, tids, std::chrono::seconds(5));
            });
            return seen;
        };
        ExecContext normal(2);
        for (const auto& [tid, nice] : record(normal)) QCOMPARE(nice, before);
        QCOMPARE(normal.priority(), ThreadPriority::Normal);

        ExecContext background(2, ThreadPriority::Background);
        std::set<std::pair<long, int>> seen;
        long callerTid = 0;
        std::thread caller([&] {
            callerTid = syscall(SYS_gettid);
            seen = record(background);
        });
        caller.join();
        std::set<long> threads;
        for (const auto& [tid, nice] : seen) {
            threads.insert(tid);
            QVERIFY2(nice >= kBackgroundNice, qPrintable(QStringLiteral("thread %1 at nice %2").arg(tid).arg(nice)));
        }
        QVERIFY2(threads.size() >= 2, "only one thread ran the loop");
        QVERIFY(threads.count(mainTid) == 0);
        QCOMPARE(niceOf(mainTid), before);  // a thread that ran no task keeps its priority
        // One thread: the task runs on the caller, which is lowered too.
        ExecContext single(1, ThreadPriority::Background);
        std::thread lone([&] {
            single.parallelFor(4, 1, [](int64_t, int64_t){});
            QVERIFY(getpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid))) >= kBackgroundNice);
        });
        lone.join();
        Q_UNUSED(callerTid);
#else
        QSKIP("per-thread priorities are set on Linux only");
#endif
    }
};

QTEST_APPLESS_MAIN(TestExecContext)
#include "test_exec_context.moc"
