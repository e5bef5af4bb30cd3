// matmul on every kernel path this machine runs, for every weight type:
// accuracy against the scalar reference dot, and the bit-exact invariants
// (paths agree, N tokens == N single tokens, thread counts, row subsets).
#include "cairn/error.h"
#include "cairn/exec.h"
#include "random_weights.h"
#include "same_bits.h"
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/row_tiles.h"

#include <QTest>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace cairn;
using namespace cairn::tensor;
using namespace cairn::test;

namespace {

const auto& kTypes = kKernelTypes;

// The activations as the kernels see them: rounded through the 8-bit format.
std::vector<float> roundTripActivations(TensorType weightType, const float* x, int64_t cols) {
    std::vector<float> out(static_cast<size_t>(cols));
    if (!quantizesActivations(weightType)) {
        std::memcpy(out.data(), x, size_t(cols) * 4);
    } else if (traits(weightType).blockSize == 32) {
        std::vector<BlockQ8_0> q(size_t(cols / 32));
        quantizeRowQ8_0(x, q.data(), cols);
        dequantizeRow(TensorType::Q8_0, q.data(), out.data(), cols);
    } else {
        std::vector<BlockQ8_K> q(size_t(cols / 256));
        quantizeRowQ8K(x, q.data(), cols);
        for (int64_t i = 0; i < cols; ++i) out[size_t(i)] = q[size_t(i / 256)].d * q[size_t(i / 256)].qs[i % 256];
    }
    return out;
}

std::vector<float> run(const MatrixView& w, const std::vector<float>& x, int64_t tokens, int threads) {
    ExecContext ctx(threads);
    std::vector<float> y(size_t(tokens * w.rows), NAN);
    matmul(w, x.data(), w.cols, tokens, y.data(), w.rows, ctx);
    return y;
}

}  // namespace

class TestKernelsMatmul : public QObject {
    Q_OBJECT
private slots:
    void init() { QVERIFY(forceKernelPath("scalar")); }
    void cleanupTestCase() { forceKernelPath(availableKernelPaths().front()); }

    void pathsAreReported() {
        auto paths = availableKernelPaths();
        QVERIFY(!paths.empty());
        QCOMPARE(paths.back(), std::string("scalar"));
        QVERIFY(forceKernelPath(paths.front()));
        QCOMPARE(std::string(kernelPath()), paths.front());
        QVERIFY(!forceKernelPath("no-such-path"));
        QCOMPARE(std::string(kernelPath()), paths.front());
    }

    void matchesReferenceOnEveryPath_data() {
        QTest::addColumn<int>("type");
        for (TensorType t : kTypes) QTest::newRow(std::string(tensorTypeName(t)).c_str()) << int(t);
    }
    // Against dotReference of the stored weights with the activations as the
    // kernel quantized them: only float rounding of the block sums remains.
    void matchesReferenceOnEveryPath() {
        QFETCH(int, type);
        const auto t = TensorType(type);
        const int64_t rows = 37, cols = 512, tokens = 5;
        Weights w = makeWeights(t, rows, cols, 1000 + type);
        auto x = makeActivations(tokens, cols, 7);
        for (const std::string& path : availableKernelPaths()) {
            QVERIFY(forceKernelPath(path));
            auto y = run(w.view, x, tokens, 1);
            for (int64_t tok = 0; tok < tokens; ++tok) {
                auto xr = roundTripActivations(t, &x[size_t(tok * cols)], cols);
                std::vector<float> wr(static_cast<size_t>(cols));
                for (int64_t r = 0; r < rows; ++r) {
                    const float ref = dotReference(t, w.view.row(r), xr.data(), cols);
                    dequantizeRow(t, w.view.row(r), wr.data(), cols);
                    double mag = 0;
                    for (int64_t i = 0; i < cols; ++i) mag += std::fabs(double(wr[size_t(i)]) * xr[size_t(i)]);
                    const float got = y[size_t(tok * rows + r)];
                    if (!(std::fabs(got - ref) <= 1e-5 * mag + 1e-7))
                        QFAIL(qPrintable(QString("%1 path %2 row %3 token %4: got %5, reference %6 (scale %7)")
                                             .arg(tensorTypeName(t).data())
                                             .arg(path.c_str())
                                             .arg(r)
                                             .arg(tok)
                                             .arg(got, 0, 'g', 9)
                                             .arg(ref, 0, 'g', 9)
                                             .arg(mag)));
                }
            }
        }
    }

    void invariantsAreBitExact_data() { matchesReferenceOnEveryPath_data(); }
    // Every path gives the scalar bits; N tokens == N single tokens; 1/2/3
    // threads and any subset of rows give the same bits. Shapes with ragged
    // tails (rows not a multiple of any tile, tokens not a multiple of 16).
    void invariantsAreBitExact() {
        QFETCH(int, type);
        const auto t = TensorType(type);
        const int64_t rows = 83, cols = 768, tokens = 37;
        Weights w = makeWeights(t, rows, cols, 2000 + type);
        auto x = makeActivations(tokens, cols, 11);
        QVERIFY(forceKernelPath("scalar"));
        const auto reference = run(w.view, x, tokens, 1);
        for (const std::string& path : availableKernelPaths()) {
            QVERIFY(forceKernelPath(path));
            const auto batched = run(w.view, x, tokens, 1);
            QVERIFY2(sameBits(batched, reference), path.c_str());
            for (int threads : {2, 3}) QVERIFY2(sameBits(run(w.view, x, tokens, threads), reference), path.c_str());
            // One token at a time (the decode path), and odd token counts.
            for (int64_t tok = 0; tok < tokens; tok += 6) {
                std::vector<float> one(x.begin() + tok * cols, x.begin() + (tok + 1) * cols);
                auto y1 = run(w.view, one, 1, 2);
                for (int64_t r = 0; r < rows; ++r)
                    QVERIFY2(std::memcmp(&y1[size_t(r)], &reference[size_t(tok * rows + r)], 4) == 0, path.c_str());
            }
            for (int64_t n : {int64_t(2), int64_t(17)}) {
                std::vector<float> part(x.begin() + 3 * cols, x.begin() + (3 + n) * cols);
                auto yp = run(w.view, part, n, 2);
                QVERIFY2(std::memcmp(yp.data(), &reference[size_t(3 * rows)], size_t(n * rows) * 4) == 0, path.c_str());
            }
            // Rows [5, 5 + 21) as their own matrix.
            MatrixView sub = w.view;
            sub.data = w.view.row(5);
            sub.rows = 21;
            auto ys = run(sub, x, tokens, 3);
            for (int64_t tok = 0; tok < tokens; ++tok)
                QVERIFY2(std::memcmp(&ys[size_t(tok * 21)], &reference[size_t(tok * rows + 5)], 21 * 4) == 0,
                         path.c_str());
        }
    }

    void decodeShapesAreBitExact_data() { matchesReferenceOnEveryPath_data(); }
    // The single-token (decode) kernels on their edge shapes, every path
    // against the scalar bits: rows of one block, very wide rows, rows padded
    // beyond their bytes (a row stride longer than a row), exactly one 16-row
    // tile, row ranges that split tiles between tasks and sub-matrices, and
    // enough tiles (25) for the one-token task split of 2 and 3 threads.
    void decodeShapesAreBitExact() {
        QFETCH(int, type);
        const auto t = TensorType(type);
        const int64_t block = quantizesActivations(t) ? kernels::quantInfo(t).blockSize : 16;
        struct Shape {
            int64_t rows, cols, pad;
        };
        const Shape shapes[] = {
            {40, block, 0}, {16, block, 0}, {35, block * 64, 0}, {33, block * 3, 64}, {49, block * 2, 6}, {389, block, 0}};
        for (const Shape& sh : shapes) {
            Weights w = makeWeights(t, sh.rows, sh.cols, 500 + uint32_t(sh.cols) + uint32_t(type));
            std::vector<uint8_t> padded;
            MatrixView view = w.view;
            if (sh.pad) {  // same rows, `pad` bytes of garbage after each
                const size_t rb = w.view.rowStride, stride = rb + size_t(sh.pad);
                padded.assign(stride * size_t(sh.rows), 0xA5);
                for (int64_t r = 0; r < sh.rows; ++r) std::memcpy(&padded[size_t(r) * stride], w.view.row(r), rb);
                view.data = padded.data();
                view.rowStride = stride;
            }
            const auto x = makeActivations(1, sh.cols, 600 + uint32_t(sh.cols));
            QVERIFY(forceKernelPath("scalar"));
            const auto reference = run(view, x, 1, 1);
            for (const std::string& path : availableKernelPaths()) {
                QVERIFY(forceKernelPath(path));
                const std::string what = path + " " + std::to_string(sh.rows) + "x" + std::to_string(sh.cols);
                for (int threads : {1, 2, 3}) QVERIFY2(sameBits(run(view, x, 1, threads), reference), what.c_str());
                MatrixView sub = view;  // rows [3, rows - 2): tiles start off the 16-row grid
                sub.data = view.row(3);
                sub.rows = sh.rows - 5;
                const auto ys = run(sub, x, 1, 2);
                QVERIFY2(std::memcmp(ys.data(), &reference[3], size_t(sub.rows) * 4) == 0, what.c_str());
            }
        }
    }

    // The float GEMMs' blocking edges against the scalar bits: rows beyond
    // whole 16- and 32-row tiles and 32- and 64-row blocks (AVX2, AVX-512),
    // token counts 2-26 (every partial 6- and 12-token tile, and two whole
    // 12-token groups), and K past one 8192-column chunk by a partial chunk
    // (accumulators carried across chunks), on 1 and 2 threads.
    void floatGemmEdgesAreBitExact() {
        for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
            const int64_t rows = 83, cols = 8192 + 48;
            Weights w = makeWeights(t, rows, cols, 91);
            const int64_t maxTokens = 26;
            auto x = makeActivations(maxTokens, cols, 92);
            QVERIFY(forceKernelPath("scalar"));
            const auto reference = run(w.view, x, maxTokens, 1);
            for (const std::string& path : availableKernelPaths()) {
                QVERIFY(forceKernelPath(path));
                for (int64_t n = 2; n <= maxTokens; ++n) {
                    std::vector<float> part(x.begin(), x.begin() + n * cols);
                    for (int threads : {1, 2}) {
                        auto yp = run(w.view, part, n, threads);
                        const std::string what =
                            path + " " + std::string(tensorTypeName(t)) + " tokens " + std::to_string(n);
                        QVERIFY2(std::memcmp(yp.data(), reference.data(), size_t(n * rows) * 4) == 0, what.c_str());
                    }
                }
            }
        }
    }

    // Float weights with a row length that is no multiple of the 16 lanes:
    // the masked tails give the scalar bits on every path, batched or not.
    void raggedFloatRowsAreBitExact() {
        for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
            const int64_t rows = 19, cols = 100, tokens = 9;
            Weights w = makeWeights(t, rows, cols, 77);
            auto x = makeActivations(tokens, cols, 78);
            QVERIFY(forceKernelPath("scalar"));
            const auto reference = run(w.view, x, tokens, 1);
            for (int64_t tok = 0; tok < tokens; ++tok)
                for (int64_t r = 0; r < rows; ++r) {
                    const float ref = dotReference(t, w.view.row(r), &x[size_t(tok * cols)], cols);
                    QVERIFY(std::fabs(reference[size_t(tok * rows + r)] - ref) <= 1e-5f * cols);
                }
            for (const std::string& path : availableKernelPaths()) {
                QVERIFY(forceKernelPath(path));
                QVERIFY2(sameBits(run(w.view, x, tokens, 2), reference), path.c_str());
                std::vector<float> one(x.begin() + 4 * cols, x.begin() + 5 * cols);
                auto y1 = run(w.view, one, 1, 1);
                QVERIFY2(std::memcmp(y1.data(), &reference[size_t(4 * rows)], size_t(rows) * 4) == 0, path.c_str());
            }
        }
    }

    // The paths' token quantizers write the arrays of the reference
    // quantizers (quantizeTokenReference), byte for byte: codes,
    // d, o · xs, dx · xs and the sums of 16, on rows whose block count is
    // not a multiple of the blocks quantized together (16 on AVX-512, 8 on
    // AVX2), with ties,
    // zero blocks and (Q8_K) a NaN, which the scale must skip as the
    // reference does, and an infinity.
    void tokenQuantizersMatchReference() {
        struct Arrays {
            std::vector<int8_t> q;
            std::vector<float> d, sx;
            std::vector<int32_t> xoff;
            std::vector<int16_t> bsum;
            explicit Arrays(int64_t n)
                : q(size_t(n), 99), d(size_t(n / 32), NAN), sx(size_t(n / 32), NAN), xoff(size_t(n / 32), -1),
                  bsum(size_t(n / 16), -1) {}
            kernels::TokenQ8 out() { return {q.data(), d.data(), xoff.data(), sx.data(), bsum.data()}; }
            bool operator==(const Arrays& o) const {
                return q == o.q && sameBits(d, o.d) && sameBits(sx, o.sx) && xoff == o.xoff && bsum == o.bsum;
            }
        };
        int compared = 0;
        for (const int64_t n : {int64_t(32), int64_t(1280), int64_t(2048 + 3 * 32 + 256)}) {
            std::vector<float> x = makeActivations(1, n, 31 + int(n));
            for (int i = 0; i < 32; ++i) x[size_t(i + 32) % size_t(n)] = 0.f;  // a zero Q8_0 block
            if (n >= 512) {
                for (int i = 64; i < 96; ++i) x[size_t(i)] = float(i - 80) + 0.5f;  // ties: amax 127 sets id 1
                x[64] = 127.f;
                for (int i = 256; i < 512; ++i) x[size_t(i)] = float((i % 9) - 4) + 0.5f;  // Q8_K ties
                x[256] = -127.f;
                x[300] = 127.f;  // the same magnitude later: the first decides the sign
            }
            for (const int blockSize : {32, 256}) {
                if (n % blockSize) continue;
                std::vector<float> xk = x;
                if (blockSize == 256 && n >= 1024) {
                    xk[size_t(n - 256 + 7)] = std::nanf("");
                    xk[size_t(n - 512 + 3)] = INFINITY;  // iscale -0: every product 0 or NaN
                }
                Arrays want(n);
                kernels::quantizeTokenReference(blockSize, 128, xk.data(), n, want.out());
                for (const std::string& path : availableKernelPaths()) {
                    const kernels::KernelSet* ks = kernels::kernelsNamed(path);
                    QVERIFY(ks);
                    Arrays got(n);
                    const auto own = blockSize == 32 ? ks->quantizeToken32 : nullptr;
                    const auto ownK = blockSize == 256 ? ks->quantizeTokenK : nullptr;
                    if (!own && !ownK) continue;  // matmul calls the reference itself
                    if (own) own(xk.data(), n, 128, got.out());
                    else ownK(xk.data(), n, got.out());
                    ++compared;
                    QVERIFY2(got == want, qPrintable(QString("%1, %2 columns, blocks of %3")
                                                         .arg(QString::fromStdString(path))
                                                         .arg(n)
                                                         .arg(blockSize)));
                }
            }
        }
#if defined(__x86_64__)
        QVERIFY(compared > 0);  // every x86-64 path with SIMD has its own
#endif
    }

    // RowsDone: each row is reported exactly once, in ranges that start and
    // end on the multiple asked for (or the last row), and only after every
    // token's output of those rows is written; the outputs are matmul's own.
    void rowsDoneSeesEachRowOnceWritten() {
        const int64_t rows = 400, cols = 256;  // 25 tiles of 16: OneTokenTasks on 2 threads, not on 3
        for (const TensorType type : {TensorType::Q8_0, TensorType::Q4_K, TensorType::F16}) {
            Weights w = makeWeights(type, rows, cols, 77);
            for (const int64_t tokens : {int64_t(1), int64_t(5)}) {
                const std::vector<float> x = makeActivations(tokens, cols, 78);
                const std::vector<float> want = run(w.view, x, tokens, 1);
                for (const int64_t multiple : {int64_t(16), int64_t(48)})
                    for (const int threads : {1, 2, 3}) {
                        ExecContext ctx(threads);
                        std::vector<float> y(size_t(tokens * rows), NAN);
                        std::vector<std::atomic<int>> seen(static_cast<size_t>(rows));
                        std::atomic<int> bad{0};
                        const RowsDone then{multiple, [&](int64_t r0, int64_t r1) {
                                                if (r0 % multiple || (r1 % multiple && r1 != rows) || r0 >= r1) ++bad;
                                                for (int64_t r = r0; r < r1; ++r) {
                                                    ++seen[size_t(r)];
                                                    for (int64_t t = 0; t < tokens; ++t)
                                                        if (std::isnan(y[size_t(t * rows + r)])) ++bad;
                                                }
                                            }};
                        matmul(w.view, x.data(), cols, tokens, y.data(), rows, ctx, then);
                        const QString what = QString("%1 tokens %2 multiple %3 threads %4")
                                                 .arg(QString::fromStdString(std::string(tensorTypeName(type))))
                                                 .arg(tokens)
                                                 .arg(multiple)
                                                 .arg(threads);
                        QVERIFY2(bad == 0, qPrintable(what));
                        for (const auto& n : seen) QVERIFY2(n == 1, qPrintable(what));
                        QVERIFY2(sameBits(y, want), qPrintable(what));
                    }
            }
        }
    }

    // matmulSameInput: every output gets the bits of its own matmul, whether
    // its matrix runs in one call with its neighbours (the same type,
    // columns and layout) or alone, on every path and thread count, with
    // few units a thread (one task a unit) or many (OneTokenTasks).
    void sameInputCallsGiveEachMatmulsBits() {
        const int64_t cols = 512;
        struct Set {
            std::vector<TensorType> types;
            std::vector<int64_t> rows;
            std::vector<bool> tiled;
        };
        const std::vector<Set> sets = {
            {{TensorType::Q4_0, TensorType::Q4_0, TensorType::Q4_0}, {400, 112, 112}, {false, false, false}},
            {{TensorType::Q4_0, TensorType::Q4_0, TensorType::Q4_0}, {96, 32, 40}, {false, false, false}},
            {{TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0}, {256, 64, 64}, {true, true, true}},
            {{TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0}, {256, 64, 64}, {true, false, true}},
            {{TensorType::Q4_K, TensorType::Q4_K, TensorType::Q6_K}, {272, 64, 64}, {true, true, true}},
            {{TensorType::F16, TensorType::F16, TensorType::F16}, {200, 50, 50}, {false, false, false}},
        };
        for (size_t si = 0; si < sets.size(); ++si) {
            const Set& set = sets[si];
            std::vector<Weights> ws;
            std::vector<std::vector<uint8_t>> tiles;
            for (size_t m = 0; m < set.types.size(); ++m) {
                ws.push_back(makeWeights(set.types[m], set.rows[m], cols, 900 + uint32_t(si * 8 + m)));
                if (set.tiled[m] && rowTilesFit(set.types[m], cols)) {
                    ExecContext one(1);
                    tiles.emplace_back(ws.back().bytes.size());
                    ws.back().view = tileRows(ws.back().view, tiles.back().data(), one);
                }
            }
            for (const std::string& path : availableKernelPaths()) {
                QVERIFY(forceKernelPath(path));
                for (const int64_t tokens : {int64_t(1), int64_t(3)}) {
                    const std::vector<float> x = makeActivations(tokens, cols, 950 + uint32_t(si));
                    std::vector<std::vector<float>> alone;
                    for (const Weights& w : ws) alone.push_back(run(w.view, x, tokens, 1));
                    for (const int threads : {1, 2, 3}) {
                        ExecContext ctx(threads);
                        std::vector<std::vector<float>> ys;
                        std::vector<MatmulOutput> outs;
                        for (const Weights& w : ws) ys.emplace_back(size_t(tokens * w.view.rows), NAN);
                        for (size_t m = 0; m < ws.size(); ++m)
                            outs.push_back({ws[m].view, ys[m].data(), ws[m].view.rows});
                        matmulSameInput(outs, x.data(), cols, tokens, ctx);
                        for (size_t m = 0; m < ws.size(); ++m)
                            QVERIFY2(sameBits(ys[m], alone[m]),
                                     qPrintable(QString("set %1 matrix %2 path %3 tokens %4 threads %5")
                                                    .arg(si)
                                                    .arg(m)
                                                    .arg(QString::fromStdString(path))
                                                    .arg(tokens)
                                                    .arg(threads)));
                    }
                }
            }
        }
    }

    // matmul called from inside parallelFor tasks of the same context: every
    // call keeps its own activations and gives the bits it gives alone. (A
    // matmul nested in a range of a loop runs on that range's thread, one
    // scratch level deeper; this guards shared buffers.)
    void nestedCallsAreIndependent() {
        QVERIFY(forceKernelPath(availableKernelPaths().front()));
        const int64_t rows = 256, cols = 512, tokens = 24, calls = 16;
        std::vector<Weights> ws;
        std::vector<std::vector<float>> xs, alone;
        const TensorType types[] = {TensorType::Q4_0, TensorType::Q4_K, TensorType::Q8_0, TensorType::F16};
        for (int i = 0; i < calls; ++i) {
            ws.push_back(makeWeights(types[i % 4], rows, cols, 300 + i));
            xs.push_back(makeActivations(tokens - i, cols, 40 + i));
            alone.push_back(run(ws.back().view, xs.back(), tokens - i, 1));
        }
        ExecContext ctx(3);
        std::vector<std::vector<float>> nested(calls);
        for (int rep = 0; rep < 3; ++rep) {
            ctx.parallelFor(calls, 1, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                    nested[size_t(i)].assign(size_t((tokens - i) * rows), NAN);
                    matmul(ws[size_t(i)].view, xs[size_t(i)].data(), cols, tokens - i, nested[size_t(i)].data(), rows,
                           ctx);
                }
            });
            for (int i = 0; i < calls; ++i) QVERIFY(sameBits(nested[size_t(i)], alone[size_t(i)]));
        }
    }

    void badShapesAreErrors() {
        Weights w = makeWeights(TensorType::Q4_K, 4, 256, 3);
        MatrixView bad = w.view;
        bad.cols = 128;  // not a multiple of 256
        std::vector<float> x(256), y(4);
        ExecContext ctx(1);
        QVERIFY_THROWS_EXCEPTION(Error, matmul(bad, x.data(), 256, 1, y.data(), 4, ctx));
        MatrixView unsupported = w.view;
        unsupported.type = TensorType::IQ2_XXS;
        QVERIFY_THROWS_EXCEPTION(Error, matmul(unsupported, x.data(), 256, 1, y.data(), 4, ctx));
    }
};

QTEST_GUILESS_MAIN(TestKernelsMatmul)
#include "test_kernels_matmul.moc"
