// cairn-cli bench-kernels: speed of matmul per weight type on the kernel path
// in use — prefill GEMM (GFLOP/s) and single-token decode (GB/s of weights).
// Random weights; the decode figure cycles through enough copies of the matrix
// (>= 512 MiB) that every call streams from memory, as a model's decode does,
// from the kind of memory a model's owned weights live in.
#include "command.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "tensor/huge_page_buffer.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/row_tiles.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <sstream>
#include <vector>

namespace cairn::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Process CPU seconds: on a shared, loaded machine wall time says little, so
// the table also gives throughput per CPU-second (times the thread count).
double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Random weights: quantized from uniform floats where a reference quantizer
// exists, otherwise random codes with sane half-float scales.
std::vector<uint8_t> randomWeights(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    const size_t rb = rowBytes(type, cols);
    std::vector<uint8_t> bytes(rb * size_t(rows));
    std::vector<float> row(static_cast<size_t>(cols));
    try {
        for (int64_t r = 0; r < rows; ++r) {
            for (auto& v : row) v = uni(rng);
            tensor::quantizeRow(type, row.data(), bytes.data() + size_t(r) * rb, cols);
        }
    } catch (const Error&) {
        for (auto& b : bytes) b = uint8_t(rng());
        std::vector<size_t> halves;
        switch (type) {
        case TensorType::Q2_K: halves = {80, 82}; break;
        case TensorType::Q3_K: halves = {108}; break;
        case TensorType::Q4_K:
        case TensorType::Q5_K: halves = {0, 2}; break;
        case TensorType::Q6_K: halves = {208}; break;
        default: break;
        }
        const size_t bb = traits(type).blockBytes;
        for (size_t b = 0; b < bytes.size() / bb; ++b)
            for (size_t off : halves) {
                uint16_t h = tensor::f32ToF16(0.01f);
                std::memcpy(&bytes[b * bb + off], &h, 2);
            }
    }
    return bytes;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string part; std::getline(ss, part, ',');) out.push_back(part);
    return out;
}

TensorType typeByName(const std::string& name) {
    for (uint32_t i = 0; i < 40; ++i) {
        auto t = tensorTypeTraits(i);
        if (t && t->name == name) return TensorType(i);
    }
    throw Error("bench-kernels", "unknown type '" + name + "'");
}

}  // namespace

int runBenchKernels(Args& args) {
    const auto types = split(args.option("", "--types").value_or("Q4_0,Q8_0,Q4_K,Q6_K,F16"));
    const int64_t rows = int64_t(args.number("", "--rows", 2048));
    const int64_t cols = int64_t(args.number("", "--cols", 2048));
    const int64_t tokens = int64_t(args.number("-p", "--tokens", 512));
    const int threads = int(args.number("-t", "--threads", 2));
    const int reps = std::max(1, int(args.number("-r", "--reps", 3)));
    // Decode working set; a small one measures the kernel from cache instead of memory.
    const double decodeMiB = args.number("", "--decode-mib", 512);
    if (auto path = args.option("", "--path"); path && !tensor::forceKernelPath(*path))
        throw Error("bench-kernels", "kernel path '" + *path + "' is not available on this CPU");
    args.positionals();

    ExecContext ctx(threads);
    // "best" is the fastest repetition: on a VM whose speed drifts for minutes
    // at a time, comparing two builds' best is steadier than their medians.
    std::printf("kernel path %s, %d threads, weights %lld x %lld, prefill %lld tokens, median of %d\n",
                tensor::kernelPath(), threads, (long long)rows, (long long)cols, (long long)tokens, reps);
    std::printf("%-5s  %10s %9s %9s %9s  %10s %7s %7s %7s\n", "type", "prefill ms", "GFLOP/s", "(cpu)", "(best)",
                "decode us", "GB/s", "(cpu)", "(best)");
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    std::vector<float> x(size_t(tokens * cols));
    for (auto& v : x) v = uni(rng);
    std::vector<float> y(size_t(tokens * rows));
    for (const std::string& name : types) {
        const TensorType type = typeByName(name);
        const size_t rb = rowBytes(type, cols), matBytes = rb * size_t(rows);
        auto w0 = randomWeights(type, rows, cols, 1);
        // Prefill: one matrix, all tokens. In the layout a model would store
        // it in on this CPU (tensor/row_tiles.h).
        tensor::MatrixView w{type, w0.data(), rows, cols, rb};
        if (tensor::rowTilesWanted(type) && tensor::rowTilesFit(type, cols)) {
            std::vector<uint8_t> tiles(w0.size());
            w = tensor::tileRows(w, tiles.data(), ctx);
            w0.swap(tiles);  // w0 owns the tiles now (w points at them)
        }
        tensor::matmul(w, x.data(), cols, tokens, y.data(), rows, ctx);  // warm-up
        std::vector<double> gemm, gemmCpu;
        for (int i = 0; i < reps; ++i) {
            auto t0 = Clock::now();
            const double c0 = cpuSeconds();
            tensor::matmul(w, x.data(), cols, tokens, y.data(), rows, ctx);
            gemm.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            gemmCpu.push_back((cpuSeconds() - c0) / threads);
        }
        // Decode: copies of the matrix totalling >= --decode-mib, one token each.
        const size_t copies = std::max<size_t>(1, size_t(decodeMiB * 1048576.0) / matBytes);
        // The memory kind a model's owned weights live in (tensor/huge_page_buffer.h).
        const tensor::HugePageBuffer big(matBytes * copies);
        if (!big) throw Error("bench-kernels", "cannot allocate " + std::to_string(matBytes * copies) + " bytes");
        for (size_t c = 0; c < copies; ++c) std::memcpy(big.data() + c * matBytes, w0.data(), matBytes);
        std::vector<double> dec, decCpu;
        for (int i = 0; i < reps; ++i) {
            auto t0 = Clock::now();
            const double c0 = cpuSeconds();
            for (size_t c = 0; c < copies; ++c) {
                tensor::MatrixView wc = w;
                wc.data = big.data() + c * matBytes;
                tensor::matmul(wc, x.data(), cols, 1, y.data(), rows, ctx);
            }
            dec.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / double(copies));
            decCpu.push_back((cpuSeconds() - c0) / threads / double(copies));
        }
        const double g = median(gemm), d = median(dec), flops = 2.0 * double(rows) * double(cols) * double(tokens);
        const double gBest = *std::min_element(gemm.begin(), gemm.end());
        const double dBest = *std::min_element(dec.begin(), dec.end());
        if (w.layout == tensor::RowLayout::Tiles16)
            std::printf("%s in 16-row tiles (CAIRN_ROW_TILES=off: file layout)\n", name.c_str());
        std::printf("%-5s  %10.2f %9.1f %9.1f %9.1f  %10.1f %7.1f %7.1f %7.1f\n", name.c_str(), g * 1e3,
                    flops / g * 1e-9, flops / median(gemmCpu) * 1e-9, flops / gBest * 1e-9, d * 1e6,
                    double(matBytes) / d * 1e-9, double(matBytes) / median(decCpu) * 1e-9,
                    double(matBytes) / dBest * 1e-9);
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace cairn::cli
