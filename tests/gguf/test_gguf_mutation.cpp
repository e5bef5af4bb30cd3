// Mutation test of the GGUF reader on the shared fixtures and vocabularies:
// byte flips (mostly in the header, metadata and tensor infos, some in the
// data), truncations (every length in the first 512 bytes, others across the
// file), extensions with garbage, and length/count/type fields overwritten
// with huge or off-by-one values. Every case must load or throw cairn::Error
// with a one-line message — never crash, hang or read outside the buffer (the
// buffer ends at a PROT_NONE page) — and parsing must allocate at most
// parseAllocationBound(size) bytes, which for files of 64 KiB or more is the
// file size itself. Fixed seed; CAIRN_MUTATION_SCALE=N multiplies the counts.
#include "allocation_counter.h"
#include "gguf_bytes.h"
#include "shared_data.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

using namespace cairn;
using namespace cairn::test;

namespace {

// A buffer whose end touches an inaccessible page: placing n bytes puts them
// right before it, so reading one byte too far faults, with or without ASan.
class GuardedBuffer {
public:
    explicit GuardedBuffer(size_t capacity) {
        page_ = size_t(sysconf(_SC_PAGESIZE));
        size_ = (capacity + page_ - 1) / page_ * page_ + page_;
        void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
        base_ = static_cast<uint8_t*>(p);
        mprotect(base_ + size_ - page_, page_, PROT_NONE);
        capacity_ = size_ - page_;
    }
    ~GuardedBuffer() { munmap(base_, size_); }
    GuardedBuffer(const GuardedBuffer&) = delete;
    GuardedBuffer& operator=(const GuardedBuffer&) = delete;

    uint8_t* place(const uint8_t* src, size_t n) {
        if (n > capacity_) throw std::runtime_error("guarded buffer too small");
        uint8_t* p = end() - n;
        std::memcpy(p, src, n);
        return p;
    }
    uint8_t* end() const { return base_ + capacity_; }

private:
    uint8_t* base_ = nullptr;
    size_t size_ = 0, page_ = 0, capacity_ = 0;
};

// Deterministic everywhere (std distributions are not specified bit for bit).
struct Rng {
    std::mt19937_64 g;
    explicit Rng(uint64_t seed) : g(seed) {}
    uint64_t below(uint64_t n) { return n == 0 ? 0 : g() % n; }
    uint64_t in(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }  // [lo, hi]
};

template <typename T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

struct Field {
    uint64_t at;
    int width;  // 4 or 8
};

// Where the count, length, type, dimension and offset fields of a valid file are.
std::vector<Field> structuralFields(const gguf::File& f, Rng& rng) {
    std::vector<Field> out = {{4, 4}, {8, 8}, {16, 8}};
    auto off = [&](const void* p) { return uint64_t(static_cast<const uint8_t*>(p) - f.base()); };
    for (const auto& v : f.metadata()) {
        uint64_t key = off(v.key().data());
        uint64_t type = key + v.key().size();
        out.push_back({key - 8, 8});
        out.push_back({type, 4});
        if (v.type() == gguf::ValueType::String) {
            out.push_back({type + 4, 8});
        } else if (v.isArray()) {
            out.push_back({type + 4, 4});
            out.push_back({type + 8, 8});
            if (v.elementType() == gguf::ValueType::String && v.size() > 0) {
                // The first string's length and a few picked at random.
                std::vector<uint64_t> lengths;
                const uint8_t* p = v.rawArray().data();
                uint64_t n = v.size();
                std::vector<uint64_t> pick = {0, n - 1, rng.below(n), rng.below(n)};
                std::sort(pick.begin(), pick.end());
                size_t k = 0;
                for (uint64_t i = 0; i < n && k < pick.size(); ++i) {
                    while (k < pick.size() && pick[k] == i) {
                        out.push_back({off(p), 8});
                        ++k;
                    }
                    p += 8 + load<uint64_t>(p);
                }
            }
        }
    }
    for (const auto& t : f.tensors()) {
        auto tf = tensorFields(f, t.name);
        out.push_back({tf.nameLength, 8});
        out.push_back({tf.nDims, 4});
        for (uint32_t d = 0; d < t.nDims; ++d) out.push_back({tf.dims + 8 * d, 8});
        out.push_back({tf.type, 4});
        out.push_back({tf.offset, 8});
    }
    return out;
}

// Error kinds, for the summary.
std::string kindOf(const std::string& msg) {
    static const char* kinds[] = {"not a GGUF file",
                                  "unsupported GGUF version",
                                  "absurd",
                                  "truncated file",
                                  "runs past the end",
                                  "cannot fit",
                                  "unknown value type",
                                  "unknown array element type",
                                  "nested arrays",
                                  "must be 0 or 1",
                                  "empty key",
                                  "duplicate metadata key",
                                  "duplicate tensor name",
                                  "general.alignment",
                                  "bytes long",
                                  "dimensions (GGUF allows",
                                  "beyond the int64 range",
                                  "overflow",
                                  "unknown tensor type",
                                  "block size",
                                  "not a multiple of the alignment",
                                  "lies past the end",
                                  "run past the end"};
    for (const char* k : kinds)
        if (msg.find(k) != std::string::npos) return k;
    return "other";
}

struct Outcome {
    bool loaded = false;
    bool otherException = false;
    char message[512] = {};
    int64_t peak = 0;
    int64_t leaked = 0;
    size_t kvs = 0, tensors = 0;
    uint64_t dataOffset = 0;
};

// Touches the first and last byte of every view the File hands out, so that
// a view outside the buffer faults here.
unsigned touchViews(const gguf::File& f) {
    unsigned sum = 0;
    auto touch = [&](const void* p, size_t n) {
        if (n == 0) return;
        auto* b = static_cast<const uint8_t*>(p);
        sum += b[0] + b[n - 1];
    };
    for (const auto& v : f.metadata()) {
        touch(v.key().data(), v.key().size());
        if (v.type() == gguf::ValueType::String) touch(v.asString().data(), v.asString().size());
        if (v.isArray()) touch(v.rawArray().data(), v.rawArray().size());
    }
    for (const auto& t : f.tensors()) touch(t.data, t.nbytes);
    return sum;
}

volatile unsigned gSink = 0;

Outcome parseCounted(const uint8_t* data, size_t size) {
    Outcome o;
    alloc::open();
    try {
        auto f = gguf::File::fromMemory(data, size, "mutant");
        o.loaded = true;
        o.kvs = f.metadata().size();
        o.tensors = f.tensors().size();
        o.dataOffset = f.dataOffset();
        gSink = gSink + touchViews(f);
    } catch (const Error& e) {
        std::snprintf(o.message, sizeof o.message, "%s", e.what());  // no allocation
    } catch (const std::exception& e) {
        o.otherException = true;
        std::snprintf(o.message, sizeof o.message, "%s", e.what());
    }
    alloc::close();
    o.peak = alloc::peak;
    o.leaked = alloc::current;
    return o;
}

struct Stats {
    uint64_t cases = 0, loaded = 0, rejected = 0, openCases = 0;
    double worstRatioLarge = 0;  // peak / size over files of 64 KiB and more
    int64_t worstPeakSmall = 0;  // peak over smaller files
    std::map<std::string, uint64_t> kinds;
};

}  // namespace

class TestGgufMutation : public QObject {
    Q_OBJECT

    Stats stats_;
    int scale_ = 1;

    // Checks one outcome; returns false (after recording a failure) if it breaks a rule.
    bool check(const Outcome& o, size_t size, const std::string& what) {
        ++stats_.cases;
        auto fail = [&](const std::string& why) {
            QTest::qFail((why + " — case: " + what + " — " + o.message).c_str(), __FILE__, __LINE__);
            return false;
        };
        if (o.otherException) return fail("an exception other than cairn::Error");
        if (o.leaked != 0) return fail("parse leaked " + std::to_string(o.leaked) + " bytes");
        if (uint64_t(o.peak) > gguf::parseAllocationBound(size))
            return fail("allocated " + std::to_string(o.peak) + " bytes for a " + std::to_string(size) + "-byte file");
        if (size >= 64 * 1024) {
            stats_.worstRatioLarge = std::max(stats_.worstRatioLarge, double(o.peak) / double(size));
            if (uint64_t(o.peak) > size) return fail("allocated more than the file size");
        } else {
            stats_.worstPeakSmall = std::max(stats_.worstPeakSmall, o.peak);
        }
        if (o.loaded) {
            ++stats_.loaded;
            return true;
        }
        ++stats_.rejected;
        std::string msg = o.message;
        if (msg.rfind("mutant: ", 0) != 0) return fail("the message does not start with the file name");
        if (msg.find('\n') != std::string::npos || msg.find('\r') != std::string::npos)
            return fail("a multi-line message");
        ++stats_.kinds[kindOf(msg)];
        return true;
    }

    // Parses the same bytes through File::open on a temporary file; the
    // outcome must match fromMemory's (apart from the file name).
    void checkThroughOpen(const uint8_t* data, size_t size, const Outcome& fromMemory, const QTemporaryDir& dir,
                          const std::string& what) {
        std::string path = dir.filePath("mutant.gguf").toStdString();
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
        }
        ++stats_.openCases;
        std::string viaOpen;
        bool loaded = false;
        try {
            auto f = gguf::File::open(path);
            loaded = true;
            QCOMPARE(f.metadata().size(), fromMemory.kvs);
            QCOMPARE(f.tensors().size(), fromMemory.tensors);
            gSink = gSink + touchViews(f);
        } catch (const Error& e) {
            viaOpen = e.reason();
        }
        QVERIFY2(loaded == fromMemory.loaded, what.c_str());
        if (!loaded) {
            std::string expected = std::string(fromMemory.message).substr(std::string("mutant: ").size());
            QCOMPARE(viaOpen, expected);
        }
    }

    void mutateFile(const std::string& path, uint64_t seed) {
        std::string raw = readFile(path);
        const auto* orig = reinterpret_cast<const uint8_t*>(raw.data());
        const size_t size = raw.size();
        const std::string name = std::filesystem::path(path).filename().string();
        Rng rng(seed);

        auto original = gguf::File::fromMemory(orig, size, name);
        const uint64_t headerEnd = original.headerBytes().size();
        const size_t nKv = original.metadata().size(), nTensors = original.tensors().size();
        auto fields = structuralFields(original, rng);

        GuardedBuffer buf(size + 64 * 1024);
        uint8_t* work = buf.place(orig, size);
        auto caseName = [&](const std::string& kind, uint64_t a, uint64_t b = 0) {
            return name + " " + kind + " " + std::to_string(a) + " " + std::to_string(b);
        };

        // 1. The original loads, within the bound.
        auto base = parseCounted(work, size);
        QVERIFY2(base.loaded, base.message);
        QVERIFY(check(base, size, caseName("original", 0)));

        // 2. Byte flips: half in the first 4 KiB of the header, a quarter on
        // structural fields, the rest anywhere in the header or in the data.
        const int flips = 60 * scale_;
        for (int i = 0; i < flips; ++i) {
            uint64_t at;
            int region = i % 8;
            if (region < 4) at = rng.below(std::min<uint64_t>(headerEnd, 4096));
            else if (region < 6) {
                const auto& fl = fields[rng.below(fields.size())];
                at = fl.at + rng.below(uint64_t(fl.width));
            } else if (region == 6) at = rng.below(headerEnd);
            else at = size > headerEnd ? headerEnd + rng.below(size - headerEnd) : rng.below(size);
            uint8_t mask = uint8_t(rng.in(1, 255));
            work[at] ^= mask;
            auto o = parseCounted(work, size);
            bool inData = nTensors > 0 && at >= headerEnd;  // padding or tensor bytes
            work[at] ^= mask;
            if (!check(o, size, caseName("flip", at, mask))) return;
            if (inData) {
                // Tensor bytes are not parsed: the file must load as before.
                QVERIFY2(o.loaded, caseName("flip in data", at).c_str());
                QCOMPARE(o.kvs, nKv);
                QCOMPARE(o.tensors, nTensors);
            }
        }

        // 3. Overwritten count, length, type, dimension and offset fields.
        const int overwrites = 60 * scale_;
        for (int i = 0; i < overwrites; ++i) {
            const auto& fl = fields[rng.below(fields.size())];
            uint64_t old = fl.width == 8 ? load<uint64_t>(work + fl.at) : load<uint32_t>(work + fl.at);
            const uint64_t candidates[] = {0,
                                           1,
                                           old + 1,
                                           old - 1,
                                           old * 2,
                                           old + 32,
                                           uint64_t(1) << 31,
                                           uint64_t(1) << 32,
                                           (uint64_t(1) << 63) - 1,
                                           uint64_t(1) << 63,
                                           ~uint64_t(0),
                                           size,
                                           size - fl.at,
                                           0x03000000,
                                           31};
            uint64_t v = candidates[rng.below(std::size(candidates))];
            uint8_t saved[8];
            std::memcpy(saved, work + fl.at, size_t(fl.width));
            if (fl.width == 8) std::memcpy(work + fl.at, &v, 8);
            else {
                uint32_t v32 = uint32_t(v);
                std::memcpy(work + fl.at, &v32, 4);
            }
            auto o = parseCounted(work, size);
            std::memcpy(work + fl.at, saved, size_t(fl.width));
            if (!check(o, size, caseName("overwrite", fl.at, v))) return;
        }

        // 4. Truncations: every length below 512, lengths around structural
        // fields, and lengths anywhere (the bytes end at the guard page).
        std::vector<uint64_t> lengths;
        for (uint64_t n = 0; n < std::min<uint64_t>(512, size); ++n) lengths.push_back(n);
        for (int i = 0; i < 12 * scale_; ++i) {
            const auto& fl = fields[rng.below(fields.size())];
            lengths.push_back(fl.at + rng.below(uint64_t(fl.width) + 1));
        }
        for (int i = 0; i < 8 * scale_; ++i) lengths.push_back(rng.below(headerEnd + 1));
        for (int i = 0; i < 4 * scale_; ++i) lengths.push_back(rng.below(size));
        for (uint64_t n : lengths) {
            uint8_t* p = buf.place(orig, size_t(n));
            auto o = parseCounted(p, size_t(n));
            if (!check(o, size_t(n), caseName("truncate", n))) return;
            QVERIFY2(!o.loaded || nTensors == 0 || n >= original.dataOffset(), caseName("truncate loaded", n).c_str());
        }

        // 5. Extensions with garbage: trailing bytes are ignored.
        for (uint64_t extra : {uint64_t(1), uint64_t(31), uint64_t(4096) + rng.below(4096)}) {
            uint8_t* p = buf.end() - (size + extra);
            std::memcpy(p, orig, size);
            for (uint64_t i = 0; i < extra; ++i) p[size + i] = uint8_t(rng.g());
            auto o = parseCounted(p, size_t(size + extra));
            if (!check(o, size_t(size + extra), caseName("extend", extra))) return;
            QVERIFY2(o.loaded, caseName("extend", extra).c_str());
            QCOMPARE(o.kvs, nKv);
            QCOMPARE(o.tensors, nTensors);
            if (nTensors > 0) QCOMPARE(o.dataOffset, original.dataOffset());
        }

        // 6. A few cases through File::open on a temporary file: a truncation
        // inside the header, and (for small files) a flip.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        uint64_t cut = rng.below(std::min<uint64_t>(headerEnd, 256 * 1024) + 1);
        auto oc = parseCounted(buf.place(orig, size_t(cut)), size_t(cut));
        checkThroughOpen(buf.end() - cut, size_t(cut), oc, dir, caseName("open truncated", cut));
        if (size <= 2 * 1024 * 1024) {
            work = buf.place(orig, size);
            uint64_t at = rng.below(std::min<uint64_t>(headerEnd, 4096));
            work[at] ^= 0x5a;
            auto of = parseCounted(work, size);
            checkThroughOpen(work, size, of, dir, caseName("open flip", at));
        }
    }

private slots:
    void initTestCase() {
        if (const char* s = std::getenv("CAIRN_MUTATION_SCALE")) scale_ = std::max(1, std::atoi(s));
    }

    void mutationsLoadOrFailCleanly() {
        std::vector<std::string> files;
        for (const char* dir : {"fixtures", "vocab"})
            for (const auto& e : std::filesystem::directory_iterator(sharedPath(dir)))
                if (e.path().extension() == ".gguf") files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        QVERIFY(files.size() >= 10);
        QElapsedTimer timer;
        timer.start();
        uint64_t seed = 20261129;
        for (const auto& f : files) {
            mutateFile(f, seed++);
            if (QTest::currentTestFailed()) return;
        }
        qInfo("%llu cases over %zu files (%llu through File::open): %llu loaded, %llu rejected, %lld ms",
              (unsigned long long)stats_.cases, files.size(), (unsigned long long)stats_.openCases,
              (unsigned long long)stats_.loaded, (unsigned long long)stats_.rejected, (long long)timer.elapsed());
        qInfo("peak allocation: at most %.4f x the file size for files >= 64 KiB; at most %lld bytes for smaller ones",
              stats_.worstRatioLarge, (long long)stats_.worstPeakSmall);
        for (const auto& [kind, n] : stats_.kinds) qInfo("  %6llu  %s", (unsigned long long)n, kind.c_str());
        QVERIFY(stats_.cases >= 1000);
        QVERIFY(stats_.rejected > 0 && stats_.loaded > 0);
    }
};

CAIRN_CONFORMANCE_MAIN(TestGgufMutation)
#include "test_gguf_mutation.moc"
