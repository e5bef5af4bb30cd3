// The aarch64 kernel paths (NEON, NEON with dot products) against the scalar
// path, bit for bit: every matmul weight format, attention, and whole tiny
// models (llama, qwen3, mamba). Built by the aarch64 cross build and run under
// qemu-user (tools/cross/check-aarch64.sh), so it is a plain program: QtTest
// does not start under qemu-user here (its watchdog thread hangs in
// pthread_create), and everything runs on the calling thread (ExecContext(1))
// for the same reason. Thread and chunk invariants are the native tests' job;
// this checks that the Arm paths compute the canonical arithmetic.
//
//   neon_paths_check --expect neon-dotprod,neon,scalar
#include "cairn/exec.h"
#include "cairn/model.h"
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/attention_kernels.h"
#include "random_weights.h"
#include "same_bits.h"
#include "tensor/matmul.h"
#include "tiny_mamba.h"
#include "tiny_models.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace cairn;
using namespace cairn::test;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    if (!ok) ++failures;
}

void usePath(const std::string& path) {
    if (!tensor::forceKernelPath(path)) {
        std::fprintf(stderr, "neon_paths_check: kernel path %s is not available\n", path.c_str());
        std::exit(1);
    }
}

std::vector<float> runMatmul(const tensor::MatrixView& w, const std::vector<float>& x, int64_t tokens) {
    ExecContext ctx(1);
    std::vector<float> y(size_t(tokens * w.rows), NAN);
    tensor::matmul(w, x.data(), w.cols, tokens, y.data(), w.rows, ctx);
    return y;
}

// Every format, decode (1-3 tokens) and batch shapes, rows not a multiple of the tiles.
void checkMatmul(const std::vector<std::string>& paths) {
    for (TensorType type : kKernelTypes) {
        const bool isFloat = !tensor::quantizesActivations(type);
        for (const int64_t cols : {int64_t(512), isFloat ? int64_t(100) : int64_t(768)}) {
            const int64_t rows = 37;
            const Weights w = makeWeights(type, rows, cols, uint32_t(100 + int(type) + cols));
            for (const int64_t tokens : {1, 2, 3, 5, 17}) {
                const auto x = makeActivations(tokens, cols, uint32_t(tokens));
                usePath("scalar");
                const auto reference = runMatmul(w.view, x, tokens);
                for (const auto& path : paths) {
                    usePath(path);
                    check(sameBits(runMatmul(w.view, x, tokens), reference),
                          "matmul " + std::string(tensorTypeName(type)) + " " + std::to_string(rows) + "x" +
                              std::to_string(cols) + " tokens " + std::to_string(tokens) + " on " + path);
                }
            }
        }
    }
}

struct AttentionCase {
    int64_t heads, kvHeads, keyDim, valueDim, length;
    float spread;
    int64_t window = 0;  // sliding-window attention (Gemma 3)
};

std::vector<float> runAttention(const AttentionCase& c, const std::vector<float>& q, const memory::KvCache& cache,
                                int64_t chunk) {
    ExecContext ctx(1);
    const model::AttentionShape shape{
        c.heads, c.kvHeads, c.keyDim, c.valueDim, float(1.0 / std::sqrt(double(c.keyDim))), c.window};
    const int64_t qd = c.heads * c.keyDim, od = c.heads * c.valueDim;
    std::vector<float> out(size_t(c.length * od));
    for (int64_t p0 = 0; p0 < c.length; p0 += chunk) {
        const int64_t n = std::min(chunk, c.length - p0);
        model::attention(cache, 0, shape, &q[size_t(p0 * qd)], qd, n, p0, &out[size_t(p0 * od)], od, ctx);
    }
    return out;
}

// Head sizes and lengths around the 4- and 16-lane chunks, GQA groups 1-6, a peaked softmax.
void checkAttention(const std::vector<std::string>& paths) {
    const AttentionCase cases[] = {{8, 2, 64, 64, 100, 1.0f}, {8, 2, 128, 128, 37, 1.0f},  {12, 2, 24, 40, 29, 1.0f},
                                   {5, 1, 48, 56, 21, 1.0f},  {3, 1, 13, 21, 50, 1.0f},    {2, 1, 7, 5, 17, 1.0f},
                                   {4, 4, 40, 24, 65, 6.0f},  {4, 1, 32, 32, 70, 1.0f, 32}};
    for (const auto& c : cases)
        for (const auto kv : {KvType::F32, KvType::F16}) {
            std::mt19937 rng(uint32_t(c.keyDim * 31 + c.length));
            std::normal_distribution<float> nd;
            std::vector<float> q(size_t(c.length * c.heads * c.keyDim)), k(size_t(c.keyDim)), v(size_t(c.valueDim));
            for (auto& x : q) x = nd(rng) * c.spread;
            memory::KvCache cache(1, c.kvHeads, c.keyDim, c.valueDim, c.length, kv);
            for (int64_t p = 0; p < c.length; ++p)
                for (int64_t h = 0; h < c.kvHeads; ++h) {
                    for (auto& x : k) x = nd(rng) * c.spread;
                    for (auto& x : v) x = nd(rng);
                    cache.writeK(0, h, p, k.data());
                    cache.writeV(0, h, p, v.data());
                }
            usePath("scalar");
            const auto reference = runAttention(c, q, cache, c.length);
            const std::string name = "attention h" + std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) + " k" +
                std::to_string(c.keyDim) + " v" + std::to_string(c.valueDim) + " n" + std::to_string(c.length) + " w" +
                std::to_string(c.window) + (kv == KvType::F16 ? " f16" : " f32");
            for (const auto& path : paths) {
                usePath(path);
                check(sameBits(runAttention(c, q, cache, c.length), reference) &&
                          sameBits(runAttention(c, q, cache, 5), reference),
                      name + " on " + path + " (kernels " + model::attn::activeKernels().name + ")");
            }
        }
}

std::vector<float> allLogits(const Model& m, const std::vector<int32_t>& tokens, int64_t chunk) {
    ExecContext ctx(1);
    auto mem = m.newMemory({128, KvType::F16});
    std::vector<float> out(tokens.size() * size_t(m.info().vocabSize));
    prefill(m, *mem, tokens, chunk, true, out.data(), ctx);
    return out;
}

// Whole forward passes: every position's logits on each path ≡ scalar, and
// one token at a time ≡ chunks of 16 on each path.
void checkModel(const std::string& name, const std::string& file, const std::vector<std::string>& paths) {
    const auto model = Model::load(file);
    std::mt19937 rng(5);
    std::vector<int32_t> tokens(40);
    for (auto& t : tokens) t = int32_t(rng() % uint32_t(kTinyVocab));
    usePath("scalar");
    const auto reference = allLogits(*model, tokens, 16);
    bool finite = true;
    for (float x : reference) finite = finite && std::isfinite(x);
    check(finite, name + ": scalar logits are finite");
    for (const auto& path : paths) {
        usePath(path);
        check(sameBits(allLogits(*model, tokens, 16), reference) && sameBits(allLogits(*model, tokens, 1), reference),
              name + " logits on " + path);
    }
}

void checkModels(const std::vector<std::string>& paths) {
    const auto dir = std::filesystem::temp_directory_path() / ("neon_paths_check." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const TensorType type : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0}) {
        TinyModelOptions o;
        o.type = type;
        checkModel("tiny llama " + std::string(tensorTypeName(type)), writeTinyModel((dir / "llama.gguf").string(), o),
                   paths);
    }
    TinyModelOptions qwen3;
    qwen3.arch = TinyArch::Qwen3;
    checkModel("tiny qwen3 F32", writeTinyModel((dir / "qwen3.gguf").string(), qwen3), paths);
    for (const TensorType type : {TensorType::F32, TensorType::Q8_0}) {
        TinyMambaOptions o;
        o.type = type;
        checkModel("tiny mamba " + std::string(tensorTypeName(type)), writeTinyMamba((dir / "mamba.gguf").string(), o),
                   paths);
    }
    std::filesystem::remove_all(dir);
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t end = std::min(s.find(',', start), s.size());
        out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || std::string(argv[1]) != "--expect") {
        std::fprintf(stderr, "usage: neon_paths_check --expect PATH,PATH,...\n");
        return 2;
    }
    const auto expected = split(argv[2]);
    const auto available = tensor::availableKernelPaths();
    std::string got;
    for (const auto& p : available) got += (got.empty() ? "" : ",") + p;
    check(available == expected, "kernel paths on this CPU: " + got + " (expected " + argv[2] + ")");

    std::vector<std::string> simd;
    for (const auto& p : available)
        if (p != "scalar") simd.push_back(p);
    checkMatmul(simd);
    checkAttention(simd);
    checkModels(simd);
    std::printf("%d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
