// The calibration cache: one JSON file (untrusted input: bounded, every field
// checked, anything unexpected refused with one line) and the
// load-or-measure step around it.
#include "cairn/error.h"
#include "cairn/kernel_calibration.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cairn {

namespace {

using nlohmann::json;

constexpr size_t kMaxFileBytes = 64 * 1024;
constexpr int kMaxDepth = 4;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxPaths = 16;
constexpr size_t kMaxTimings = 4 * 3 * kMaxPaths;  // decode on two thread counts
constexpr int kMaxThreads = 4096;

// Text from the file, cut to one printable ASCII line for a message.
std::string printable(const std::string& s) {
    std::string out;
    for (char c : s.substr(0, 80))
        out += (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
    return s.size() > 80 ? out + "..." : out;
}

template <class Enum, size_t N>
Enum byName(const Enum (&all)[N], std::string_view (*nameOf)(Enum), const std::string& name, const std::string& where,
            const char* what) {
    for (Enum e : all)
        if (nameOf(e) == name) return e;
    throw Error(where, std::string("unknown ") + what + " \"" + printable(name) + "\"");
}

const json& member(const json& obj, const char* key, json::value_t type, const std::string& where) {
    const auto it = obj.find(key);
    const bool ok = it != obj.end() &&
        (it->type() == type || (type == json::value_t::number_float && it->is_number()) ||
         (type == json::value_t::number_integer && it->is_number_integer()));
    if (!ok) throw Error(where, std::string("\"") + key + "\" is missing or of the wrong type");
    return *it;
}

std::string shortString(const json& obj, const char* key, const std::string& where) {
    const std::string s = member(obj, key, json::value_t::string, where).get<std::string>();
    if (s.empty() || s.size() > kMaxNameBytes) throw Error(where, std::string("\"") + key + "\" is empty or too long");
    return s;
}

std::string supportedPath(const std::string& name, const std::vector<std::string>& supported,
                          const std::string& where) {
    for (const std::string& p : supported)
        if (p == name) return p;
    throw Error(where, "path \"" + printable(name) + "\" is not supported by this build and CPU");
}

double finiteNumber(const json& obj, const char* key, double lo, double hi, const std::string& where) {
    const double v = member(obj, key, json::value_t::number_float, where).get<double>();
    if (!std::isfinite(v) || v < lo || v > hi) throw Error(where, std::string("\"") + key + "\" is out of range");
    return v;
}

std::string readBounded(const std::filesystem::path& file, const std::string& where) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) throw Error(where, "not a regular file");
    const auto size = std::filesystem::file_size(file, ec);
    if (ec || size > kMaxFileBytes) throw Error(where, "larger than 64 KiB");
    std::ifstream in(file, std::ios::binary);
    std::string text(size_t(size), '\0');
    if (!in.read(text.data(), std::streamsize(size))) throw Error(where, "cannot be read");
    return text;
}

// Writes next to the target and renames, so a reader never sees half a file.
void writeAtomically(const std::filesystem::path& file, const std::string& text, const std::string& where) {
    std::error_code ec;
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
    const std::filesystem::path tmp = file.string() + ".tmp-" + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out) {
            std::filesystem::remove(tmp, ec);
            throw Error(where, "cannot be written");
        }
    }
    std::filesystem::rename(tmp, file, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(where, "cannot be written");
    }
}

}  // namespace

std::string kernelCalibrationToJson(const KernelCalibration& c) {
    json choice = json::object();
    for (KernelRegime r : kKernelRegimes) {
        json per = json::object();
        for (KernelFamily f : kKernelFamilies) per[std::string(kernelFamilyName(f))] = c.choice.at(f, r);
        choice[std::string(kernelRegimeName(r))] = per;
    }
    json timings = json::array();
    for (const KernelTiming& t : c.timings)
        timings.push_back({{"family", kernelFamilyName(t.family)},
                           {"regime", kernelRegimeName(t.regime)},
                           {"path", t.path},
                           {"seconds", t.seconds},
                           {"bytes", t.bytes},
                           {"rounds", t.rounds},
                           {"threads", t.threads}});
    const json j = {
        {"format", kKernelCalibrationFormat}, {"cpu", c.cpuModel}, {"threads", c.threads}, {"paths", c.paths},
        {"measure_ms", c.measureMs},          {"choice", choice},  {"timings", timings}};
    return j.dump(1) + "\n";
}

KernelCalibration kernelCalibrationFromJson(std::string_view text, const std::string& where,
                                            const std::vector<std::string>& supported) {
    if (text.size() > kMaxFileBytes) throw Error(where, "larger than 64 KiB");
    json j;
    try {
        // Nesting is bounded before anything is built from it.
        j = json::parse(text, [&](int depth, json::parse_event_t, json&) {
            if (depth > kMaxDepth) throw Error(where, "nested too deeply");
            return true;
        });
    } catch (const json::exception&) {
        throw Error(where, "not valid JSON");
    }
    if (!j.is_object()) throw Error(where, "not a JSON object");
    const int64_t format = member(j, "format", json::value_t::number_integer, where).get<int64_t>();
    if (format != kKernelCalibrationFormat)
        throw Error(where,
                    "format " + std::to_string(format) + ", this build reads " +
                        std::to_string(kKernelCalibrationFormat));
    KernelCalibration c;
    c.cpuModel = shortString(j, "cpu", where);
    const int64_t threads = member(j, "threads", json::value_t::number_integer, where).get<int64_t>();
    if (threads < 1 || threads > kMaxThreads) throw Error(where, "\"threads\" is out of range");
    c.threads = int(threads);
    const json& paths = member(j, "paths", json::value_t::array, where);
    if (paths.empty() || paths.size() > kMaxPaths) throw Error(where, "\"paths\" has no entries or too many");
    for (const json& p : paths) {
        if (!p.is_string() || p.get_ref<const std::string&>().size() > kMaxNameBytes)
            throw Error(where, "\"paths\" holds something other than a short name");
        c.paths.push_back(p.get<std::string>());
    }
    c.measureMs = finiteNumber(j, "measure_ms", 0, 1e7, where);
    const json& choice = member(j, "choice", json::value_t::object, where);
    for (KernelRegime r : kKernelRegimes) {
        const json& per = member(choice, std::string(kernelRegimeName(r)).c_str(), json::value_t::object, where);
        for (KernelFamily f : kKernelFamilies)
            c.choice.at(f, r) =
                supportedPath(shortString(per, std::string(kernelFamilyName(f)).c_str(), where), supported, where);
    }
    const json& timings = member(j, "timings", json::value_t::array, where);
    if (timings.size() > kMaxTimings) throw Error(where, "too many timings");
    for (const json& t : timings) {
        if (!t.is_object()) throw Error(where, "a timing is not an object");
        KernelTiming k;
        k.family = byName(kKernelFamilies, kernelFamilyName, shortString(t, "family", where), where, "family");
        k.regime = byName(kKernelRegimes, kernelRegimeName, shortString(t, "regime", where), where, "regime");
        k.path = supportedPath(shortString(t, "path", where), supported, where);
        k.seconds = finiteNumber(t, "seconds", 0, 1e4, where);
        k.bytes = finiteNumber(t, "bytes", 0, 1e13, where);
        const int64_t threads = member(t, "threads", json::value_t::number_integer, where).get<int64_t>();
        if (threads < 1 || threads > kMaxThreads) throw Error(where, "a timing's \"threads\" is out of range");
        k.threads = int(threads);
        const json& rounds = member(t, "rounds", json::value_t::array, where);
        if (rounds.size() > kMaxCalibrationRounds) throw Error(where, "a timing has too many rounds");
        for (const json& r : rounds) {
            if (!r.is_number() || !std::isfinite(r.get<double>()) || r.get<double>() < 0 || r.get<double>() > 1e4)
                throw Error(where, "a timing's rounds hold something other than seconds");
            k.rounds.push_back(r.get<double>());
        }
        c.timings.push_back(std::move(k));
    }
    return c;
}

KernelCalibration loadOrCalibrateKernels(const std::filesystem::path& cacheFile, ExecContext& ctx,
                                         const KernelCalibrationOptions& options) {
    const std::string where = "kernel calibration cache " + cacheFile.string();
    const std::string cpu = options.cpuModel.empty() ? cpuModelName() : options.cpuModel;
    const std::vector<std::string> supported = supportedKernelPaths();
    std::string note;
    std::error_code ec;
    if (std::filesystem::exists(cacheFile, ec)) {
        try {
            KernelCalibration cached = kernelCalibrationFromJson(readBounded(cacheFile, where), where, supported);
            if (cached.cpuModel != cpu)
                note =
                    where + ": measured on \"" + printable(cached.cpuModel) + "\", this is \"" + printable(cpu) + "\"";
            else if (cached.threads != ctx.threads())
                note = where + ": measured with " + std::to_string(cached.threads) + " threads, now " +
                    std::to_string(ctx.threads());
            else if (cached.paths != supported)
                note = where + ": measured with other kernel paths than this build and CPU have";
            else {
                // The choice follows this build's rule from the stored
                // rounds: a change of rule needs no new measurement.
                cached.choice = chooseKernels(cached.timings, supported);
                cached.fromCache = true;
                return cached;
            }
        } catch (const Error& e) {
            note = e.what();
        }
    }

    KernelCalibration c;
    c.cpuModel = cpu;
    c.threads = ctx.threads();
    c.paths = supported;
    const auto t0 = std::chrono::steady_clock::now();
    const auto candidates = kernelCalibrationCandidates(supported);
    KernelMeasurement m = options.measure ? options.measure(ctx, candidates) : measureKernels(ctx, candidates);
    c.timings = std::move(m.timings);
    c.othersCpuShare = m.othersCpuShare;
    c.measureMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    c.choice = chooseKernels(c.timings, supported);
    c.cacheNote = note;
    if (c.othersCpuShare > kCalibrationBusyShare) {
        c.notCached = "kernel calibration not cached: other programs took " +
            std::to_string(int(c.othersCpuShare * 100 + 0.5)) +
            " % of the CPU while it measured, so the next load measures again";
        return c;
    }
    try {
        writeAtomically(cacheFile, kernelCalibrationToJson(c), where);
    } catch (const Error& e) {
        c.cacheNote = note.empty() ? e.what() : note + "; " + e.what();
    }
    return c;
}

}  // namespace cairn
