// The Tiles16 row layout (tensor/row_tiles.h): the re-ordering is exact and
// reversible, and matmul on a tiled weight gives the bits of the file layout
// on every kernel path, every token count and thread count — whether the
// path reads the tiles itself or through the unpacking copy.
#include "cairn/error.h"
#include "cairn/exec.h"
#include "random_weights.h"
#include "same_bits.h"
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/matmul.h"
#include "tensor/row_tiles.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace cairn;
using namespace cairn::tensor;
using namespace cairn::test;

namespace {

std::vector<float> run(const MatrixView& w, const std::vector<float>& x, int64_t tokens, int threads) {
    ExecContext ctx(threads);
    std::vector<float> y(size_t(tokens * w.rows), NAN);
    matmul(w, x.data(), w.cols, tokens, y.data(), w.rows, ctx);
    return y;
}

struct Tiled {
    std::vector<uint8_t> bytes;
    MatrixView view;
};

Tiled tiled(const MatrixView& w, int threads = 3) {
    ExecContext ctx(threads);
    Tiled t;
    t.bytes.assign(size_t(w.rows) * w.rowStride, 0);
    t.view = tileRows(w, t.bytes.data(), ctx);
    return t;
}

// Every row of a tiled matrix of `rows` rows read back by fileLayoutRow
// (the lookups of tied embeddings) equals the file's row.
bool singleRowsReadBack(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
    Weights w = makeWeights(type, rows, cols, seed);
    const Tiled t = tiled(w.view);
    std::vector<uint8_t> scratch(w.view.rowStride);
    for (int64_t r = 0; r < rows; ++r)
        if (std::memcmp(fileLayoutRow(t.view, r, scratch.data()), w.view.row(r), w.view.rowStride) != 0) return false;
    return true;
}

}  // namespace

class TestRowTiles : public QObject {
    Q_OBJECT
private slots:
    void cleanupTestCase() { forceKernelPath(availableKernelPaths().front()); }

    // Where packRowTile puts each byte (row_tiles.h), and unpackRowTile undoes it.
    void tileLayoutAndRoundTrip_data() {
        QTest::addColumn<int>("type");
        QTest::newRow("Q4_0") << int(TensorType::Q4_0);
        QTest::newRow("Q8_0") << int(TensorType::Q8_0);
    }
    void tileLayoutAndRoundTrip() {
        QFETCH(int, type);
        const auto t = TensorType(type);
        const bool q8 = t == TensorType::Q8_0;
        const size_t block = q8 ? 34 : 18, codes = block - 2;
        const uint8_t flip = q8 ? 0x80 : 0;  // Q8_0 keeps its unsigned codes
        const int64_t cols = 96;  // 3 blocks
        Weights w = makeWeights(t, kTileRows, cols, 7);
        const size_t rb = w.view.rowStride;
        std::vector<uint8_t> tile(kTileRows * rb, 0), back(kTileRows * rb, 0);
        packRowTile(t, w.view.data, rb, tile.data());
        for (int64_t b = 0; b < 3; ++b)
            for (int i = 0; i < kTileRows; ++i) {
                const uint8_t* fileBlock = w.view.row(i) + b * block;
                const uint8_t* column = tile.data() + b * 16 * block;
                QVERIFY(std::memcmp(column + 2 * i, fileBlock, 2) == 0);
                // code byte k of row i: 64-byte chunk k / 4, int32 lane i, byte k % 4
                for (size_t k = 0; k < codes; ++k)
                    QCOMPARE(column[32 + 64 * (k / 4) + 4 * i + k % 4], uint8_t(fileBlock[2 + k] ^ flip));
            }
        unpackRowTile(t, tile.data(), rb, back.data());
        QVERIFY(std::memcmp(back.data(), w.view.data, back.size()) == 0);
    }

    // Q4_K's tile holds each row's 144-byte super-block word by word: word k
    // of row i at 64k + 4i (d | dmin, 3 words of scales, 32 of codes). Q6_K's
    // holds the 52 whole words of its 210 bytes so, then the 16 rows' d, its
    // words in the order its decode kernels read them: per half n, for each
    // chunk c ql words 16n + c, 16n + 8 + c and qh word 32 + 8n + c, then
    // scale words 48 + 2n, 49 + 2n.
    void kTileIsWordsInRowLanes_data() {
        QTest::addColumn<int>("type");
        QTest::newRow("Q4_K") << int(TensorType::Q4_K);
        QTest::newRow("Q6_K") << int(TensorType::Q6_K);
    }
    void kTileIsWordsInRowLanes() {
        QFETCH(int, type);
        const auto t = TensorType(type);
        const int64_t cols = 512;  // 2 super-blocks
        Weights w = makeWeights(t, kTileRows, cols, 9);
        const size_t rb = w.view.rowStride, block = t == TensorType::Q6_K ? 210 : 144, words = block / 4;
        std::vector<size_t> slot(words);  // where word k is stored
        for (size_t k = 0; k < words; ++k) slot[k] = k;
        if (t == TensorType::Q6_K) {
            size_t next = 0;
            for (size_t n = 0; n < 2; ++n) {
                for (size_t c = 0; c < 8; ++c)
                    for (size_t k : {16 * n + c, 16 * n + 8 + c, 32 + 8 * n + c}) slot[k] = next++;
                slot[48 + 2 * n] = next++;
                slot[49 + 2 * n] = next++;
            }
        }
        std::vector<uint8_t> tile(kTileRows * rb, 0), back(kTileRows * rb, 0);
        packRowTile(t, w.view.data, rb, tile.data());
        for (int64_t b = 0; b < 2; ++b)
            for (int i = 0; i < kTileRows; ++i) {
                const uint8_t* column = tile.data() + b * 16 * block;
                for (size_t k = 0; k < words; ++k)
                    QVERIFY(std::memcmp(column + 64 * slot[k] + 4 * i, w.view.row(i) + b * block + 4 * k, 4) == 0);
                if (block % 4)  // Q6_K's d
                    QVERIFY(std::memcmp(column + 64 * words + 2 * i, w.view.row(i) + b * block + 4 * words, 2) == 0);
            }
        unpackRowTile(t, tile.data(), rb, back.data());
        QVERIFY(std::memcmp(back.data(), w.view.data, back.size()) == 0);
        QVERIFY(singleRowsReadBack(t, 21, cols, 11));
    }

    // A float tile is 8 pairs of rows, each pair's two rows interleaved in
    // chunks of 16 elements: chunk c of row 2p + i at 2 * p * rowBytes +
    // (2c + i) * chunkBytes. Single rows read back through fileLayoutRow.
    void floatTileIsRowPairs_data() {
        QTest::addColumn<int>("type");
        QTest::newRow("F32") << int(TensorType::F32);
        QTest::newRow("F16") << int(TensorType::F16);
        QTest::newRow("BF16") << int(TensorType::BF16);
    }
    void floatTileIsRowPairs() {
        QFETCH(int, type);
        const auto t = TensorType(type);
        const int64_t cols = 48;  // 3 chunks
        Weights w = makeWeights(t, kTileRows, cols, 12);
        const size_t rb = w.view.rowStride, chunk = rb / 3;
        std::vector<uint8_t> tile(kTileRows * rb, 0), back(kTileRows * rb, 0);
        packRowTile(t, w.view.data, rb, tile.data());
        for (int i = 0; i < kTileRows; ++i)
            for (size_t c = 0; c < 3; ++c)
                QVERIFY(std::memcmp(tile.data() + size_t(i / 2) * 2 * rb + (2 * c + size_t(i % 2)) * chunk,
                                    w.view.row(i) + c * chunk, chunk) == 0);
        unpackRowTile(t, tile.data(), rb, back.data());
        QVERIFY(std::memcmp(back.data(), w.view.data, back.size()) == 0);
        QVERIFY(singleRowsReadBack(t, 37, cols, 13));
    }

    // A matrix's whole tiles are re-ordered in place of their rows; the rows
    // after the last whole tile are copied as they are.
    void tileRowsKeepsTheTailRows() {
        Weights w = makeWeights(TensorType::Q4_0, 37, 64, 8);
        Tiled t = tiled(w.view);
        QCOMPARE(int(t.view.layout), int(RowLayout::Tiles16));
        QCOMPARE(t.view.rows, int64_t(37));
        const size_t rb = w.view.rowStride;
        QVERIFY(std::memcmp(t.bytes.data() + 32 * rb, w.view.row(32), 5 * rb) == 0);
        QVERIFY(std::memcmp(t.bytes.data(), w.view.data, 32 * rb) != 0);
        std::vector<uint8_t> back(16 * rb);
        unpackRowTile(TensorType::Q4_0, t.bytes.data() + 16 * rb, rb, back.data());
        QVERIFY(std::memcmp(back.data(), w.view.row(16), back.size()) == 0);
        // Single rows in the file layout (the lookups of tied embeddings).
        std::vector<uint8_t> scratch(rb);
        for (int64_t r = 0; r < 37; ++r)
            QVERIFY(std::memcmp(fileLayoutRow(t.view, r, scratch.data()), w.view.row(r), rb) == 0);
        // Tiles in parallel (16 tiles a task): the same bytes on any thread count.
        Weights big = makeWeights(TensorType::Q4_0, 16 * 70 + 3, 64, 10);
        QVERIFY(tiled(big.view, 1).bytes == tiled(big.view, 3).bytes);
    }

    // Every path, the decode regime and the GEMM's, against the scalar bits
    // on the file layout: shapes with no whole tile, exactly one, ragged
    // tails, one block per row and wide rows; 1-3 threads.
    void matmulOnTilesIsBitExactOnEveryPath() {
        struct Shape {
            int64_t rows, cols;
        };
        for (const TensorType type : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K,
                                      TensorType::F16, TensorType::BF16, TensorType::F32})
            for (Shape sh : {Shape{16, 32}, Shape{9, 64}, Shape{37, 64}, Shape{83, 768}, Shape{48, 2048}}) {
                if (traits(type).blockSize == 256) sh.cols = std::max<int64_t>(256, sh.cols / 256 * 256);  // whole super-blocks
                Weights w = makeWeights(type, sh.rows, sh.cols, 40 + uint32_t(sh.rows));
                const Tiled t = tiled(w.view);
                for (int64_t tokens : {1, 3, 5, 8, 21, 37}) {
                    const auto x = makeActivations(tokens, sh.cols, 50 + uint32_t(tokens));
                    QVERIFY(forceKernelPath("scalar"));
                    const auto reference = run(w.view, x, tokens, 1);
                    for (const std::string& path : availableKernelPaths()) {
                        QVERIFY(forceKernelPath(path));
                        const std::string what = path + " " + std::string(tensorTypeName(type)) + " " +
                            std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + ", " + std::to_string(tokens) +
                            " tokens";
                        for (int threads : {1, 2, 3})
                            QVERIFY2(sameBits(run(t.view, x, tokens, threads), reference), what.c_str());
                    }
                }
            }
    }

    // Rows wide enough that the hardware-fetched decode tiles prefetch the
    // activations (kernels_common.h), with enough tiles (25) for the one-token
    // split of 2 and 3 threads: every path against the scalar bits.
    void wideTilesAreBitExactOnEveryPath() {
        const int64_t rows = 400, cols = 8192;
        for (const TensorType type : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
            QVERIFY(kernels::prefetchesActivations(int64_t(kTileRows) * rowBytes(type, cols)));
            Weights w = makeWeights(type, rows, cols, 70 + uint32_t(type));
            const Tiled t = tiled(w.view);
            for (int64_t tokens : {1, 3}) {
                const auto x = makeActivations(tokens, cols, 80 + uint32_t(tokens));
                QVERIFY(forceKernelPath("scalar"));
                const auto reference = run(w.view, x, tokens, 1);
                for (const std::string& path : availableKernelPaths()) {
                    QVERIFY(forceKernelPath(path));
                    const std::string what =
                        path + " " + std::string(tensorTypeName(type)) + ", " + std::to_string(tokens) + " tokens";
                    for (int threads : {1, 2, 3})
                        QVERIFY2(sameBits(run(t.view, x, tokens, threads), reference), what.c_str());
                }
            }
        }
    }

    // The model tiles a weight only where the decode path reads the tiles
    // itself; the other paths still compute it (above), through a copy. The
    // AVX-512 and AVX2 paths read every tiled type (float ones too); their
    // "-file" variants none.
    void decodeReadsTilesOnlyWhereThePathDoes() {
        QVERIFY(forceKernelPath("scalar"));
        QVERIFY(!decodeReadsRowTiles(TensorType::Q4_0));
        for (const std::string& path : availableKernelPaths()) {
            QVERIFY(forceKernelPath(path));
            const bool avx512 = path.rfind("avx512", 0) == 0;
            const bool avx2 = path.rfind("avx2", 0) == 0 && path.find("-file") == std::string::npos;
            QCOMPARE(decodeReadsRowTiles(TensorType::Q4_0), avx512 || avx2);
            QCOMPARE(decodeReadsRowTiles(TensorType::Q8_0), avx512 || avx2);
            QCOMPARE(decodeReadsRowTiles(TensorType::Q4_K), avx512 || avx2);
            QCOMPARE(decodeReadsRowTiles(TensorType::Q6_K), avx512 || avx2);
            QVERIFY(!decodeReadsRowTiles(TensorType::Q5_K));
            for (const TensorType f : {TensorType::F16, TensorType::BF16, TensorType::F32})
                QCOMPARE(decodeReadsRowTiles(f), avx512 || avx2);
            // What the calibration asks per path, whichever path is active.
            for (int64_t tokens : {1, 64})
                for (const TensorType t : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K,
                                           TensorType::F16, TensorType::BF16, TensorType::F32})
                    QCOMPARE(pathReadsRowTiles(path, t, tokens), avx512 || avx2);
            QVERIFY(!pathReadsRowTiles(path, TensorType::Q5_K, 1));
        }
        QVERIFY(!pathReadsRowTiles("no-such-path", TensorType::Q4_0, 1));
    }

    void badTiledViewsAreErrors() {
        Weights q5k = makeWeights(TensorType::Q5_K, 16, 256, 3);
        std::vector<uint8_t> out(q5k.bytes.size());
        ExecContext one(1);
        QVERIFY_THROWS_EXCEPTION(Error, tileRows(q5k.view, out.data(), one));
        MatrixView fake = q5k.view;
        fake.layout = RowLayout::Tiles16;
        QVERIFY_THROWS_EXCEPTION(Error, run(fake, makeActivations(1, 256, 1), 1, 1));

        Weights q4 = makeWeights(TensorType::Q4_0, 16, 64, 4);
        MatrixView strided = q4.view;  // rows 2 apart: not contiguous
        strided.rows = 8;
        strided.rowStride *= 2;
        QVERIFY_THROWS_EXCEPTION(Error, tileRows(strided, out.data(), one));
        Tiled t = tiled(q4.view);
        QVERIFY_THROWS_EXCEPTION(Error, tileRows(t.view, out.data(), one));  // already tiled

        // Float tiles are chunks of 16 columns, at most kMaxFloatTileCols:
        // 40 columns do not fit, nor wider rows.
        Weights f16 = makeWeights(TensorType::F16, 16, 40, 5);
        QVERIFY(!rowTilesFit(TensorType::F16, 40));
        QVERIFY(rowTilesFit(TensorType::F16, 48));
        QVERIFY(rowTilesFit(TensorType::F32, kMaxFloatTileCols));
        QVERIFY(!rowTilesFit(TensorType::BF16, kMaxFloatTileCols + 16));
        QVERIFY(rowTilesFit(TensorType::Q4_0, 4096));
        Weights wide = makeWeights(TensorType::F16, 16, kMaxFloatTileCols + 16, 6);
        std::vector<uint8_t> wideOut(wide.bytes.size());
        QVERIFY_THROWS_EXCEPTION(Error, tileRows(wide.view, wideOut.data(), one));
        QVERIFY_THROWS_EXCEPTION(Error, tileRows(f16.view, out.data(), one));
        MatrixView ragged = f16.view;
        ragged.layout = RowLayout::Tiles16;
        QVERIFY_THROWS_EXCEPTION(Error, run(ragged, makeActivations(1, 40, 1), 1, 1));
    }
};

QTEST_APPLESS_MAIN(TestRowTiles)
#include "test_row_tiles.moc"
