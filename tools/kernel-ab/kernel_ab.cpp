// Two versions of engine/tensor/kernels_avx512.cpp in one process, timed in
// alternation, so that a host whose speed drifts by tens of per cent between
// runs (the shared development VMs) still shows which one is faster. Built
// and run by run.sh, which compiles this file with the versions' paths in
// KERNELS_A and KERNELS_B; each is included in its own namespace
// (`kernels` renamed by a macro), so their file-local kernels can be called.
//
// For one 16-row decode kernel (Q4_K or Q6_K, the AVX-512 L2-prefetch
// instantiation), per version:
//   - compute only: one thread, every row of a large matrix aliasing one
//     16-row tile (row stride 0), so every byte comes from L1;
//   - from memory: two threads streaming 768 MiB of blocks, each half of the rows.
// Prints the medians of 12 alternating rounds and how often B was faster.
#include "tensor/avx512_float_loads.h"
#include "tensor/blocks.h"
#include "tensor/float_gemm_avx512.h"
#include "tensor/kernels_common.h"

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
using kernels::PrefetchTo;
using Kernel = void (*)(const MatrixView&, int64_t, const int8_t*, const int16_t*, const float*, int64_t, float*);
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const std::string type = argc > 1 ? argv[1] : "Q6_K";
    if (type != "Q4_K" && type != "Q6_K") {
        std::fprintf(stderr, "usage: kernel_ab Q4_K|Q6_K\n");
        return 2;
    }
    const bool q6 = type == "Q6_K";
    const Kernel a = q6 ? Kernel(&kernels_a::matvec16Q6K<true, PrefetchTo::L2>)
                        : Kernel(&kernels_a::matvec16Q4K<true, PrefetchTo::L2>);
    const Kernel b = q6 ? Kernel(&kernels_b::matvec16Q6K<true, PrefetchTo::L2>)
                        : Kernel(&kernels_b::matvec16Q4K<true, PrefetchTo::L2>);
    const size_t blockBytes = q6 ? sizeof(BlockQ6_K) : sizeof(BlockQ4_K);
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
    for (size_t blk = 0; blk < rows * size_t(nb); ++blk) {
        uint8_t* p = &data[blk * blockBytes];
        if (q6) std::memcpy(p + 208, &half, 2);
        else {
            std::memcpy(p, &half, 2);
            std::memcpy(p + 2, &half, 2);
        }
    }
    alignas(64) int8_t x[256 * 8];
    for (int i = 0; i < 256 * nb; ++i) x[i] = int8_t(i * 37);
    alignas(64) int16_t bsum[16 * 8] = {};
    const float dx[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const MatrixView w{q6 ? TensorType::Q6_K : TensorType::Q4_K, data.data(), int64_t(rows), cols, rowBytes};

    auto fromL1 = [&](Kernel k) {
        MatrixView aliased = w;
        aliased.rowStride = 0;
        alignas(64) float out[16];
        const int calls = 20000;
        const auto t0 = Clock::now();
        for (int c = 0; c < calls; ++c) {
            k(aliased, 0, x, bsum, dx, nb, out);
            __asm__ volatile("" ::: "memory");
        }
        return 16.0 * double(rowBytes) * calls / seconds(t0) / 1e9;
    };
    auto fromMemory = [&](Kernel k) {
        std::vector<std::thread> threads;
        const auto t0 = Clock::now();
        for (int t = 0; t < 2; ++t)
            threads.emplace_back([&, t] {
                alignas(64) float out[16];
                const int64_t half = int64_t(rows) / 2;
                for (int64_t r = half * t; r + 16 <= half * (t + 1); r += 16) k(w, r, x, bsum, dx, nb, out);
            });
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
                type.c_str(), median(l1A), median(l1B), median(memA), median(memB), bFaster);
}
