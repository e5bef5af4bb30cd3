// Kernel paths chosen by measurement on this machine rather than by CPU
// features: the AVX-512 path leads on one x86 CPU and trails the AVX2 one on
// another (Zen 4 splits 512-bit operations), so a short calibration times every
// candidate path per weight family and regime on synthetic matrices and keeps
// the fastest. The result is cached per CPU model in a small JSON file; the
// cache is untrusted input (anything unexpected means: measure again).
// All paths give the same bits, so the choice never changes an output.
#pragma once

#include "cairn/exec.h"
#include "cairn/kernel_choice.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// Bumped whenever the cache's meaning changes (fields, families, kernels that
// would time differently): an older file is then measured again.
inline constexpr int kKernelCalibrationFormat = 2;

// One path timed on one family and regime.
struct KernelTiming {
    KernelFamily family = KernelFamily::Q4;
    KernelRegime regime = KernelRegime::Decode;
    std::string path;
    double seconds = 0;  // one pass over the synthetic matrices: the fastest round
    double bytes = 0;  // weight bytes that pass read (decode: GB/s = bytes / seconds)
    // Every round's time, in order. Round i of every path of one family and
    // regime ran within a few milliseconds of the others (kMaxCalibrationRounds at most).
    std::vector<double> rounds;
    int threads = 1;  // that ran it
};
inline constexpr size_t kMaxCalibrationRounds = 16;

struct KernelCalibration {
    std::string cpuModel;
    int threads = 1;
    std::vector<std::string> paths;  // supportedKernelPaths() when measured
    KernelChoice choice;  // every entry named
    std::vector<KernelTiming> timings;
    double measureMs = 0;  // wall time of the measurement (from the cache: of the one that wrote it)
    bool fromCache = false;
    std::string cacheNote;  // one line: why the cache was not used (empty when it was, or when there was none)
    double othersCpuShare = 0;  // of the measurement (kernelMeasurement)
    std::string notCached;  // one line: why this measurement was not cached (empty when it was, or from the cache)
};

// A measurement and how busy the machine was while it ran.
struct KernelMeasurement {
    std::vector<KernelTiming> timings;
    // The share (0 … 1) of the machine's CPU time that other programs took
    // meanwhile (on a virtual machine, time the host gave to others counts too).
    double othersCpuShare = 0;
};

// Other programs taking more than this share of the CPU while the
// calibration measures make its timings unreliable: on a busy 2-core Zen 5
// the choice flipped between app starts (once avx2 for q8 and k decode, once
// for q4 and float), and a cached choice stays for good. So such a
// measurement is used for this load only and not cached: the next load
// measures again.
inline constexpr double kCalibrationBusyShare = 0.25;

// "AMD EPYC (family 25, model 1, stepping 1)": /proc/cpuinfo's model name with
// the numbers that tell CPUs of one brand string apart; "unknown CPU" without it.
std::string cpuModelName();

// The paths worth timing: the supported ones without the scalar reference
// (always far slower), or {"scalar"} when it is the only one.
std::vector<std::string> kernelCalibrationCandidates(const std::vector<std::string>& supported);

// Times each candidate on every family and regime with ctx's threads: decode
// as matrix-vector products over 64 MiB of matrices evicted from the caches
// before each pass (CLFLUSHOPT; where the CPU has none, matrices larger than
// twice the L3 cache), so weights come from memory; prefill as 64-token
// products on a matrix that stays in cache. Decode is timed on one thread as
// well (over half the matrices) when ctx has more. Synthetic data from a fixed seed.
std::vector<KernelTiming> measureKernelTimings(ExecContext& ctx, const std::vector<std::string>& candidates);

// measureKernelTimings with the share of the CPU others took meanwhile (from
// /proc/stat and this process's CPU time; 0 where /proc/stat is missing).
KernelMeasurement measureKernels(ExecContext& ctx, const std::vector<std::string>& candidates);

// The CPU time of the whole machine so far, from /proc/stat's "cpu" line, in
// clock ticks: `busy` is everything but idle and I/O wait (steal included).
struct MachineCpuTicks {
    uint64_t busy = 0, total = 0;
};
// Nothing when the text has no well-formed "cpu" line.
std::optional<MachineCpuTicks> parseProcStatCpu(std::string_view procStat);
// The share of the machine's time between `before` and `after` that went to
// others than this process, which used `ownTicks` meanwhile; 0 … 1, and 0 when
// no tick passed.
double othersCpuShare(const MachineCpuTicks& before, const MachineCpuTicks& after, double ownTicks);

// The path whose kernels `path` runs with another prefetch: "avx512vnni" for
// "avx512vnni-l2pf" and "avx512vnni-hwpf", `path` itself for any other. Such
// variants read the same weight layouts and give the same bits.
std::string_view kernelPathBase(std::string_view path);

// The fastest path per family and regime. `supported` is best first; its
// first candidate that was timed is the default, and another path replaces it
// only when more than 3 % faster in decode, 10 % in prefill; in decode the
// default's own prefetch variants (kernelPathBase) when faster at all. "Faster"
// compares the paths round by round: the median over rounds of a path's time
// divided by the default's in the same round, so that a host whose memory
// speed drifts between rounds moves both (timings without matching rounds
// compare their fastest rounds). Where a family and regime was timed on
// several thread counts, a path's times relative to the default's are
// averaged over them (geometric mean over the counts both were timed on). A
// family and regime without timings gets the default.
KernelChoice chooseKernels(const std::vector<KernelTiming>& timings, const std::vector<std::string>& supported);

// The cache file's text, and its reading: any malformed, oversized or
// out-of-range content, or a path name `supported` lacks, is a cairn::Error
// naming `where` (the caller then measures again).
std::string kernelCalibrationToJson(const KernelCalibration& c);
KernelCalibration kernelCalibrationFromJson(std::string_view text, const std::string& where,
                                            const std::vector<std::string>& supported);

struct KernelCalibrationOptions {
    std::string cpuModel;  // empty: cpuModelName() (tests inject another)
    // Empty: measureKernels (tests inject timings and a load figure).
    std::function<KernelMeasurement(ExecContext&, const std::vector<std::string>&)> measure;
};

// The cached calibration when `cacheFile` holds one for this CPU model,
// thread count, format and path list, its choice made again by chooseKernels
// from the stored timings (a cache written under an older rule follows this
// build's); otherwise measures, chooses and writes
// the file (atomically; a file that cannot be written leaves a cacheNote and the
// result is still returned) unless the machine was busy (kCalibrationBusyShare:
// then notCached says so and nothing is written). Never throws for the file's content. Does not apply
// the choice (applyKernelChoice(result.choice) does).
KernelCalibration loadOrCalibrateKernels(const std::filesystem::path& cacheFile, ExecContext& ctx,
                                         const KernelCalibrationOptions& options = {});

}  // namespace cairn
