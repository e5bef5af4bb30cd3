// NextWeights: the prefetch hint of a decode matmul is the matrix that came
// after the same weights the last time, whole, with the head size it was
// made with; nothing before a successor is known, nothing with a head of 0,
// and the guesses follow a change of order and a full table that started over.
#include "tensor/next_weights.h"

#include <QTest>

#include <cstdint>
#include <cstdlib>
#include <vector>

using cairn::NextLoopReads;
using cairn::tensor::MatrixView;
using cairn::tensor::NextWeights;

namespace {
// A view of `rows` rows of `stride` bytes at a distinct address of `arena`.
MatrixView viewAt(const std::vector<uint8_t>& arena, size_t at, int64_t rows, size_t stride) {
    MatrixView w;
    w.data = arena.data() + at;
    w.rows = rows;
    w.cols = 32;
    w.rowStride = stride;
    return w;
}
}  // namespace

class TestNextWeights : public QObject {
    Q_OBJECT
private slots:
    void guessesTheSuccessorOfTheLastTime() {
        const std::vector<uint8_t> arena(64);
        const MatrixView a = viewAt(arena, 0, 16, 34), b = viewAt(arena, 1, 48, 18), c = viewAt(arena, 2, 5, 200);
        NextWeights next(4096);
        for (const MatrixView& w : {a, b, c}) QVERIFY(next.after(w).data == nullptr);  // the first token: no order yet
        for (int token = 0; token < 3; ++token) {
            const NextLoopReads afterA = next.after(a), afterB = next.after(b), afterC = next.after(c);
            QCOMPARE(afterA.data, static_cast<const void*>(b.data));
            QCOMPARE(afterA.bytes, size_t(48 * 18));
            QCOMPARE(afterA.headBytes, size_t(4096));
            QCOMPARE(afterB.data, static_cast<const void*>(c.data));
            QCOMPARE(afterB.bytes, size_t(5 * 200));
            QCOMPARE(afterC.data, static_cast<const void*>(a.data));  // the next token's first
        }
        // A new order: the guess follows what came last.
        next.after(a);
        next.after(c);
        QCOMPARE(next.after(a).data, static_cast<const void*>(c.data));
    }

    void noHintWithoutAHead() {
        const std::vector<uint8_t> arena(8);
        NextWeights next(0);
        const MatrixView a = viewAt(arena, 0, 16, 34), b = viewAt(arena, 1, 16, 34);
        for (int i = 0; i < 4; ++i) {
            QVERIFY(next.after(a).data == nullptr);
            QVERIFY(next.after(b).data == nullptr);
        }
    }

    // A table filled by other matrices (a model unloaded, another loaded)
    // starts over, and the new order is guessed from its second token on.
    void aFullTableStartsOverAndLearnsAgain() {
        const std::vector<uint8_t> arena(NextWeights::kMaxEntries + 3);
        NextWeights next(64);
        for (size_t i = 0; i < NextWeights::kMaxEntries; ++i) next.after(viewAt(arena, 3 + i, 1, 32));
        const MatrixView a = viewAt(arena, 0, 1, 32), b = viewAt(arena, 1, 1, 32), c = viewAt(arena, 2, 1, 32);
        for (int token = 0; token < 2; ++token) {
            next.after(a);
            next.after(b);
            next.after(c);
        }
        QCOMPARE(next.after(a).data, static_cast<const void*>(b.data));
        QCOMPARE(next.after(b).data, static_cast<const void*>(c.data));
        QCOMPARE(next.after(c).data, static_cast<const void*>(a.data));
    }

    void theDefaultHeadIsHalfAnL2OrOff() {
        qputenv("CAIRN_IDLE_PREFETCH", "off");
        QCOMPARE(NextWeights::defaultHeadBytes(), size_t(0));
        qunsetenv("CAIRN_IDLE_PREFETCH");
        const size_t head = NextWeights::defaultHeadBytes();
        QVERIFY2(head >= 64 * 1024 && head <= 64u << 20, qPrintable(QString::number(head)));
    }
};

QTEST_APPLESS_MAIN(TestNextWeights)
#include "test_next_weights.moc"
