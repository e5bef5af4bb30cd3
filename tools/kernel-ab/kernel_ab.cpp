// Two versions of engine/tensor/kernels_avx512.cpp (or, built with
// KERNEL_AB_AVX2, kernels_avx2_impl.h) in one process, timed in
// alternation, so that a host whose speed drifts by tens of per cent between
// runs (the shared development VMs) still shows which one is faster. Built
// and run by run.sh, which compiles this file with the versions' paths in
// KERNELS_A and KERNELS_B; each is included in its own namespace
// (`kernels` renamed by a macro), so their file-local kernels can be called.
//
// For the decode of one K format (Q2_K .. Q6_K) on the AVX-512 path with
// L2 prefetches or on the AVX2 path (the file's `rows`, whichever kernel that
// picks), per version:
//   - compute only: one thread, every row of a large matrix aliasing one
//     row tile (row stride 0), so every byte comes from L1;
//   - from memory: two threads streaming 768 MiB of blocks, each half of the rows.
// Prints the medians of 12 alternating rounds and how often B was faster.
#ifndef KERNEL_AB_AVX2
#include "tensor/avx512_float_loads.h"
#include "tensor/float_gemm_avx512.h"
#endif
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/q4k_scales_x86.h"  // before the renaming below: both versions use this one

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace cairn::tensor::kernels_a {
using namespace ::cairn::tensor::kernels;
}
namespace cairn::tensor::kernels_b {
using namespace ::cairn::tensor::kernels;
}
#define kernels kernels_a
#include KERNELS_A
#undef kernels
#define kernels kernels_b
#include KERNELS_B
#undef kernels

namespace {

using namespace cairn;
using namespace cairn::tensor;
using Rows = void (*)(const MatrixView&, int64_t, int64_t, const kernels::Activations&, float*, int64_t);
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Format {
    const char* name;
    TensorType type;
    size_t blockBytes;
    std::vector<size_t> halves;  // byte offsets of the block's half-float scales
};

Format format(const std::string& name) {
    if (name == "Q2_K") return {"Q2_K", TensorType::Q2_K, sizeof(BlockQ2_K), {80, 82}};
    if (name == "Q3_K") return {"Q3_K", TensorType::Q3_K, sizeof(BlockQ3_K), {108}};
    if (name == "Q4_K") return {"Q4_K", TensorType::Q4_K, sizeof(BlockQ4_K), {0, 2}};
    if (name == "Q5_K") return {"Q5_K", TensorType::Q5_K, sizeof(BlockQ5_K), {0, 2}};
    if (name == "Q6_K") return {"Q6_K", TensorType::Q6_K, sizeof(BlockQ6_K), {208}};
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    const Format f = format(argc > 1 ? argv[1] : "Q6_K");
    if (!f.name) {
        std::fprintf(stderr, "usage: kernel_ab Q2_K|Q3_K|Q4_K|Q5_K|Q6_K\n");
        return 2;
    }
#ifdef KERNEL_AB_AVX2
    const Rows a = &kernels_a::rows, b = &kernels_b::rows;
#else
    constexpr auto L2 = kernels::PrefetchTo::L2;
    const Rows a = &kernels_a::rows<L2>, b = &kernels_b::rows<L2>;
#endif
    const size_t blockBytes = f.blockBytes;
    const int64_t nb = 8, cols = 256 * nb;  // llama-1b's 2048-wide rows
    const size_t rowBytes = blockBytes * size_t(nb);
    const size_t rows = (size_t(768) << 20) / rowBytes / 32 * 32;

    // Pseudo-random codes with small, finite half-float scales.
    std::vector<uint8_t> data(rows * rowBytes + 65536);
    for (size_t i = 0; i + 8 <= data.size(); i += 8) {
        const uint64_t v = (i + 1) * 0x9E3779B97F4A7C15ull;
        std::memcpy(&data[i], &v, 8);
    }
    const uint16_t half = 0x2000;
    for (size_t blk = 0; blk < rows * size_t(nb); ++blk)
        for (size_t at : f.halves) std::memcpy(&data[blk * blockBytes + at], &half, 2);
    alignas(64) int8_t x[256 * 8];
    for (int i = 0; i < 256 * nb; ++i) x[i] = int8_t(i * 37);
    alignas(64) int16_t bsum[16 * 8] = {};
    const float dx[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    kernels::Activations act;
    act.weightType = f.type;
    act.cols = cols;
    act.nTokens = 1;
    act.blockSize = 256;
    act.nBlocks = nb;
    act.q = x;
    act.d = dx;
    act.bsum = bsum;
    const MatrixView w{f.type, data.data(), int64_t(rows), cols, rowBytes};

    const int64_t l1Rows = 16384;
    std::vector<float> y(std::max<size_t>(rows, size_t(l1Rows)));
    auto fromL1 = [&](Rows k) {
        MatrixView aliased = w;
        aliased.rowStride = 0;
        const auto t0 = Clock::now();
        k(aliased, 0, l1Rows, act, y.data(), 0);
        return double(l1Rows) * double(rowBytes) / seconds(t0) / 1e9;
    };
    auto fromMemory = [&](Rows k) {
        std::vector<std::thread> threads;
        const auto t0 = Clock::now();
        const int64_t half = int64_t(rows) / 2;
        for (int t = 0; t < 2; ++t)
            threads.emplace_back([&, t] { k(w, half * t, half * (t + 1), act, y.data(), 0); });
        for (auto& th : threads) th.join();
        return double(rows * rowBytes) / seconds(t0) / 1e9;
    };

    std::vector<double> l1A, l1B, memA, memB;
    int bFaster = 0;
    for (int round = 0; round < 12; ++round) {
        l1A.push_back(fromL1(a));
        l1B.push_back(fromL1(b));
        if (round % 2 == 0) {  // alternate which one streams first
            memA.push_back(fromMemory(a));
            memB.push_back(fromMemory(b));
        } else {
            memB.push_back(fromMemory(b));
            memA.push_back(fromMemory(a));
        }
        bFaster += memB.back() > memA.back();
    }
    std::printf("%s compute only (L1, 1 thread): A %.1f  B %.1f GB/s | from memory (2 threads): A %.1f  B %.1f GB/s, "
                "B faster in %d of 12 rounds\n",
                f.name, median(l1A), median(l1B), median(memA), median(memB), bFaster);
}
