// cairn-cli bench -m MODEL [-p 512] [-n 128] [-d 0] [-t 2] [-r 3] [--chunk C] [--kv f16|f32] [--json]
//                 [--sweep-chunks 16,32,64,...] [--calibrate | --kernel-cache FILE] [--read-loop MIB]
// cairn-cli bench --read-loop MIB [-t 2] [-r 3] [--json]
// Like llama-bench's pp/tg (and its -d): prompt tokens/s for a prefill of p
// tokens, and generated tokens/s for n single-token steps, each test starting
// from a memory that already holds d tokens (a copy of one prefilled before
// timing; d = 0: empty), median of r runs after one warm-up, plus peak RSS.
// --sweep-chunks prints ms per prompt token for each chunk size instead.
// --calibrate / --kernel-cache FILE: kernel paths by the calibration
// (kernel_setup.h), before the model loads; when it measures, its 64-128 MiB
// of synthetic weights count in the peak RSS.
// --read-loop MIB: a plain read of MIB MiB on the same threads
// (calibration/read_bandwidth.h), printed beside the weight bytes decode
// streamed per second: how close decode runs to the machine's memory
// bandwidth. Three passes right after each generation run give that run's
// share of what the memory gave it (a shared host's speed drifts by the
// minute, so a read loop minutes away says little about one run); seven
// passes after the tests give the best and median. Its buffer is allocated
// after the first run, and the peak RSS is taken before that (the later runs
// repeat the first one's allocations).
// Without -m, --read-loop MIB measures the memory alone: r passes (at least
// 3), best and median, e.g. to label the minutes of another program's run on
// a host whose memory speed drifts (tools/side-by-side).
#include "command.h"
#include "kernel_setup.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/kernel_choice.h"
#include "cairn/model.h"
#include "calibration/read_bandwidth.h"
#include "tensor/matmul.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>

namespace cairn::cli {
namespace {

using Clock = std::chrono::steady_clock;

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// Process CPU seconds per thread: on a shared, loaded machine wall time says
// little, so the figures also come as tokens per CPU-second of each thread.
double cpuSecondsPerThread(int threads) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9) / threads;
}

double peakRssMb() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

// Ordinary token ids (avoid the control tokens at either end of a vocabulary).
std::vector<int32_t> benchTokens(int64_t n, int64_t vocab) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    uint64_t s = 12345;
    const int64_t range = std::max<int64_t>(1, std::min<int64_t>(vocab - 300, 30000));
    for (auto& x : t) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = int32_t(100 + int64_t((s >> 33) % uint64_t(range)));
    }
    return t;
}

// The weight bytes one decode step reads: every tensor of the file, less the
// token embedding table when the model has its own output matrix (then only
// one row of the table is read per token; tied, the table is the output).
uint64_t weightBytesPerToken(const gguf::File& file) {
    uint64_t total = 0, embedding = 0;
    bool ownOutput = false;
    for (const auto& t : file.tensors()) {
        total += t.nbytes;
        if (t.name == "token_embd.weight") embedding = t.nbytes;
        if (t.name == "output.weight") ownOutput = true;
    }
    return ownOutput ? total - embedding : total;
}

// Passes of the read loop after the tests (with a model).
constexpr int kReadLoopPassesAfter = 7;

// The read loop's figures in a report, with a model or without: its JSON
// fields, and its text line (no newline: the caller may add to it).
void addReadLoop(nlohmann::json& j, const calibration::ReadBandwidth& r) {
    j["read_loop_gbs"] = r.bestGBs;
    j["read_loop_median_gbs"] = r.medianGBs;
}
void printReadLoop(double mib, int threads, int passes, const calibration::ReadBandwidth& r) {
    std::printf("read loop (%.0f MiB, %d threads, %d passes): best %.1f GB/s, median %.1f GB/s", mib, threads, passes,
                r.bestGBs, r.medianGBs);
}

// bench --read-loop MIB without a model: the memory's speed alone.
int benchMemory(double readLoopMib, int threads, int reps, bool json) {
    ExecContext ctx(threads);
    const int passes = std::max(3, reps);
    const auto r = calibration::measureReadBandwidth(size_t(readLoopMib * 1048576.0), passes, ctx);
    if (json) {
        nlohmann::json j;
        j["read_loop_mib"] = readLoopMib;
        j["threads"] = threads;
        j["passes"] = passes;
        addReadLoop(j, r);
        std::printf("%s\n", j.dump().c_str());
    } else {
        printReadLoop(readLoopMib, threads, passes, r);
        std::printf("\n");
    }
    return 0;
}

}  // namespace

int runBench(Args& args) {
    const std::optional<std::string> modelPath = args.option("-m", "--model");
    const int64_t p = int64_t(args.number("-p", "--n-prompt", 512));
    const int64_t n = int64_t(args.number("-n", "--n-gen", 128));
    const int64_t depth = int64_t(args.number("-d", "--depth", 0));
    const int threads = int(args.number("-t", "--threads", 2));
    const int reps = std::max(1, int(args.number("-r", "--repetitions", 3)));
    const int64_t chunk = int64_t(args.number("", "--chunk", double(kDefaultPrefillChunk)));
    const std::string kv = args.option("", "--kv").value_or("f16");
    const auto sweep = args.option("", "--sweep-chunks");
    const bool json = args.flag("--json");
    const KernelSetup kernels = kernelSetupFrom(args);
    const double readLoopMib = args.number("", "--read-loop", 0);
    args.positionals();
    if (!modelPath && !(readLoopMib > 0))
        throw Error("cairn-cli bench", "needs -m MODEL (or --read-loop MIB alone, for the memory's speed)");
    if (p < 1 || n < 0 || depth < 0) throw Error("cairn-cli bench", "-p must be positive, -n and -d not negative");
    // The read loop's buffer is allocated and touched whole: at most half of
    // this machine's memory, so it cannot push the model (or the system) out.
    const double memoryMib = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)) / 1048576.0;
    if (!(readLoopMib >= 0 && readLoopMib <= memoryMib / 2))
        throw Error("cairn-cli bench",
                    "--read-loop takes MiB from 0 (off) to half of this machine's memory (" +
                        std::to_string(int64_t(memoryMib / 2)) + ")");

    if (!modelPath) return benchMemory(readLoopMib, threads, reps, json);

    const std::string calibration = setUpKernels(kernels, threads);
    auto model = Model::load(*modelPath);
    ExecContext ctx(threads);
    MemoryOptions mo;
    mo.contextSize = depth + std::max(p, n) + 1;
    mo.kvType = kv == "f32" ? KvType::F32 : KvType::F16;
    const int64_t V = model->info().vocabSize;
    const auto tokens = benchTokens(depth + p + n, V);
    const auto promptTokens = std::span(tokens).subspan(size_t(depth), size_t(p));
    const auto genTokens = std::span(tokens).subspan(size_t(depth + p), size_t(n));
    std::vector<float> logits(static_cast<size_t>(V));

    // The context every test starts from (not timed).
    std::unique_ptr<Memory> atDepth = model->newMemory(mo);
    if (depth > 0) prefill(*model, *atDepth, std::span(tokens).first(size_t(depth)), chunk, false, nullptr, ctx);

    double lastCpu = 0;  // CPU seconds per thread of the last prefill
    auto prefillSeconds = [&](int64_t c) {
        auto mem = atDepth->clone();
        const auto t0 = Clock::now();
        const double c0 = cpuSecondsPerThread(threads);
        prefill(*model, *mem, promptTokens, c, false, logits.data(), ctx);
        lastCpu = cpuSecondsPerThread(threads) - c0;
        return std::chrono::duration<double>(Clock::now() - t0).count();
    };

    // Warm-up: pages the weights in.
    {
        auto mem = atDepth->clone();
        prefill(*model, *mem, promptTokens.first(size_t(std::min<int64_t>(p, 16))), chunk, false, logits.data(), ctx);
    }

    if (sweep) {
        std::printf("chunk  ms/prompt-token  cpu-ms/prompt-token  (pp%lld, %d threads, median of %d)\n", (long long)p,
                    threads, reps);
        std::stringstream ss(*sweep);
        std::string item;
        while (std::getline(ss, item, ',')) {
            const int64_t c = std::stoll(item);
            std::vector<double> t, cpu;
            for (int r = 0; r < reps; ++r) {
                t.push_back(prefillSeconds(c));
                cpu.push_back(lastCpu);
            }
            std::printf("%5lld  %14.3f  %19.3f\n", (long long)c, medianOf(t) * 1e3 / double(p),
                        medianOf(cpu) * 1e3 / double(p));
            std::fflush(stdout);
        }
        return 0;
    }

    const double weightMb = double(weightBytesPerToken(model->file())) / 1e6;
    std::optional<cairn::calibration::ReadLoop> readLoop;
    double rss = 0;
    std::vector<double> pp, tg, ppCpu, tgCpu, adjacentReadGBs, adjacentShares;
    for (int r = 0; r < reps; ++r) {
        const double seconds = prefillSeconds(chunk);
        pp.push_back(double(p) / seconds);
        ppCpu.push_back(double(p) / lastCpu);
        if (n > 0) {
            auto mem = atDepth->clone();
            const auto t0 = Clock::now();
            const double c0 = cpuSecondsPerThread(threads);
            for (int64_t i = 0; i < n; ++i)
                model->forward(*mem, genTokens.subspan(size_t(i), 1), false, logits.data(), ctx);
            tg.push_back(double(n) / std::chrono::duration<double>(Clock::now() - t0).count());
            tgCpu.push_back(double(n) / (cpuSecondsPerThread(threads) - c0));
        }
        if (readLoopMib > 0) {
            if (!readLoop) {
                rss = peakRssMb();
                readLoop.emplace(size_t(readLoopMib * 1048576.0), ctx);
            }
            if (n > 0) {
                adjacentReadGBs.push_back(readLoop->measure(3).bestGBs);
                adjacentShares.push_back(weightMb * tg.back() / 1e3 / adjacentReadGBs.back());
            }
        }
    }
    if (!readLoop) rss = peakRssMb();
    const double ppTps = medianOf(pp), tgTps = medianOf(tg);
    const double ppTpsCpu = medianOf(ppCpu), tgTpsCpu = medianOf(tgCpu);
    const double fileMb = double(model->file().fileSize()) / (1024.0 * 1024.0);
    const double decodeGBs = weightMb * tgTps / 1e3;
    const cairn::calibration::ReadBandwidth readLoopAfter =
        readLoop ? readLoop->measure(kReadLoopPassesAfter) : cairn::calibration::ReadBandwidth{};
    nlohmann::json choice = nlohmann::json::object();
    for (KernelRegime r : kKernelRegimes)
        for (KernelFamily f : kKernelFamilies)
            choice[std::string(kernelRegimeName(r))][std::string(kernelFamilyName(f))] = kernelPathFor(f, r);
    if (json) {
        nlohmann::json j = {{"model", *modelPath},
                            {"architecture", model->info().architecture},
                            {"file_mb", fileMb},
                            {"threads", threads},
                            {"n_prompt", p},
                            {"n_gen", n},
                            {"n_depth", depth},
                            {"chunk", chunk},
                            {"repetitions", reps},
                            {"kernel_path", tensor::kernelPath()},
                            {"pp_tps", ppTps},
                            {"tg_tps", tgTps},
                            {"peak_rss_mb", rss},
                            {"pp_tps_cpu", ppTpsCpu},
                            {"tg_tps_cpu", tgTpsCpu},
                            {"kernel_choice", choice},
                            {"kernel_calibration", calibration},
                            {"weights_per_token_mb", weightMb},
                            {"owned_weights_mb", double(model->ownedWeightBytes()) / 1e6},
                            {"tiled_weights_mb", double(model->tiledWeightBytes()) / 1e6},
                            {"decode_gbs", decodeGBs}};
        if (readLoopMib > 0) {
            addReadLoop(j, readLoopAfter);
            if (n > 0) {
                j["tg_tps_runs"] = tg;
                j["read_loop_adjacent_gbs"] = adjacentReadGBs;  // best of 3 passes right after each run
                j["decode_share_adjacent"] = medianOf(adjacentShares);
            }
        }
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("model %s (%.1f MiB), %d threads, kernels %s, chunk %lld, depth %lld\n", modelPath->c_str(), fileMb,
                    threads, tensor::kernelPath(), (long long)chunk, (long long)depth);
        std::printf("matmul paths (%s): %s\n", calibration.c_str(), kernelChoiceSummary().c_str());
        std::printf("pp%lld  %8.2f t/s  (%.2f t/s per CPU-second of each thread)\n", (long long)p, ppTps, ppTpsCpu);
        if (n > 0)
            std::printf("tg%lld  %8.2f t/s  (%.2f t/s per CPU-second of each thread)\n", (long long)n, tgTps, tgTpsCpu);
        std::printf("peak RSS %.1f MiB (%.1f MB of it weights copied from the file, %.1f MB of those in row tiles)\n",
                    rss, double(model->ownedWeightBytes()) / 1e6, double(model->tiledWeightBytes()) / 1e6);
        if (n > 0) std::printf("decode reads %.1f MB of weights a token: %.1f GB/s\n", weightMb, decodeGBs);
        if (readLoopMib > 0) {
            printReadLoop(readLoopMib, threads, kReadLoopPassesAfter, readLoopAfter);
            if (n > 0) std::printf("; decode %.0f %% of the best", 100.0 * decodeGBs / readLoopAfter.bestGBs);
            std::printf("\n");
            if (n > 0)
                std::printf("decode %.0f %% of the read loop right after each run (median of %d)\n",
                            100.0 * medianOf(adjacentShares), reps);
        }
    }
    return 0;
}

}  // namespace cairn::cli
