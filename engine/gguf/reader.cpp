// GGUF header parsing and validation. Every length, count and offset read from
// the file is checked against the bytes that remain before it is used, so no
// input can make the parser read outside the file, loop longer than the file
// is long, or allocate more than parseAllocationBound(file size): the tables
// are reserved once, after the counts were checked against the file size, and
// names quoted in messages are cut short. Each error names what is wrong, the
// key or tensor concerned and the byte offset of the offending field.
#include "format.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <algorithm>
#include <limits>

namespace cairn::gguf {

using namespace format;

namespace {

// What an error is about: "metadata key 'x'", "metadata entry #3", "tensor 'y'", ...
struct Subject {
    const char* kind;  // "metadata" or "tensor"
    uint64_t index;
    std::string_view name;  // empty until the name was read
    bool named = false;

    std::string describe() const {
        if (named) return std::string(kind == std::string_view("tensor") ? "tensor " : "metadata key ") + quoted(name);
        return std::string(kind == std::string_view("tensor") ? "tensor info #" : "metadata entry #") +
            std::to_string(index);
    }
};

std::string num(uint64_t v) { return std::to_string(v); }

// Table memory the parser may reserve: half the file, but at least 32 KiB so
// that small hand-written files with many short keys still load. Together with
// an error message (well under 16 KiB) this stays within parseAllocationBound.
uint64_t tableBudget(uint64_t fileSize) { return std::max<uint64_t>(fileSize / 2, 32 * 1024); }

}  // namespace

struct Parser {
    File& f;
    const uint8_t* base;
    uint64_t size;
    uint64_t pos = 0;
    static constexpr uint64_t kNoElement = std::numeric_limits<uint64_t>::max();

    [[noreturn]] void fail(uint64_t at, const std::string& what) const {
        throw Error(f.path_, what + " (at byte " + num(at) + ")");
    }
    uint64_t left() const { return size - pos; }
    void need(uint64_t n, const Subject* s, const char* field) const {
        if (n <= left()) return;
        std::string who = s ? s->describe() + ": " : std::string();
        fail(pos, "truncated file: " + who + field + " needs " + num(n) + " bytes, " + num(left()) + " left");
    }
    template <typename T>
    T read(const Subject* s, const char* field) {
        need(sizeof(T), s, field);
        T v = load<T>(base + pos);
        pos += sizeof(T);
        return v;
    }

    // A length-prefixed string; `element` numbers strings inside an array.
    std::string_view readString(const Subject& s, const char* field, uint64_t element = kNoElement) {
        auto what = [&] { return s.describe() + ": " + field + (element == kNoElement ? "" : " #" + num(element)); };
        uint64_t at = pos;
        if (left() < 8) fail(pos, "truncated file: " + what() + " length needs 8 bytes, " + num(left()) + " left");
        uint64_t n = load<uint64_t>(base + pos);
        pos += 8;
        if (n > left())
            fail(at, what() + " length " + num(n) + " runs past the end of the file (" + num(left()) + " bytes left)");
        std::string_view v(reinterpret_cast<const char*>(base + pos), size_t(n));
        pos += n;
        return v;
    }

    void checkBool(const Subject& s, uint64_t at, uint64_t element = kNoElement) const {
        uint8_t b = base[at];
        if (b > 1)
            fail(at,
                 s.describe() + ": " + (element == kNoElement ? "bool value" : "bool #" + num(element)) + " is " +
                     num(b) + ", but a GGUF bool must be 0 or 1");
    }

    void readArray(Value& v, const Subject& s) {
        uint64_t elemAt = pos;
        uint32_t elem = read<uint32_t>(&s, "array element type");
        if (!isKnownValueType(elem)) fail(elemAt, s.describe() + ": unknown array element type " + num(elem));
        if (ValueType(elem) == ValueType::Array) fail(elemAt, s.describe() + ": nested arrays are not supported");
        v.elem_ = ValueType(elem);
        uint64_t countAt = pos;
        v.count_ = read<uint64_t>(&s, "array length");
        v.data_ = base + pos;
        uint64_t start = pos;
        if (v.elem_ == ValueType::String) {
            // Each string takes at least its 8-byte length.
            if (v.count_ > left() / 8)
                fail(countAt,
                     s.describe() + ": array of " + num(v.count_) + " strings cannot fit in the " + num(left()) +
                         " bytes left");
            for (uint64_t i = 0; i < v.count_; ++i) readString(s, "string", i);
        } else {
            uint64_t es = scalarSize(v.elem_);
            if (v.count_ > left() / es)
                fail(countAt,
                     s.describe() + ": array of " + num(v.count_) + " " + std::string(valueTypeName(v.elem_)) +
                         " values runs past the end of the file (" + num(left()) + " bytes left)");
            if (v.elem_ == ValueType::Bool)
                for (uint64_t i = 0; i < v.count_; ++i) checkBool(s, pos + i, i);
            pos += v.count_ * es;
        }
        v.bytes_ = size_t(pos - start);
    }

    void readValue(Value& v, ValueType type, const Subject& s) {
        v.type_ = type;
        if (type == ValueType::String) {
            auto str = readString(s, "string value");
            v.data_ = reinterpret_cast<const uint8_t*>(str.data());
            v.bytes_ = str.size();
        } else if (type == ValueType::Array) {
            readArray(v, s);
        } else {
            size_t n = scalarSize(type);
            need(n, &s, "value");
            if (type == ValueType::Bool) checkBool(s, pos);
            v.data_ = base + pos;
            v.bytes_ = n;
            pos += n;
        }
    }

    void readHeader(uint64_t& nTensors, uint64_t& nKv) {
        if (size < 4) fail(0, "truncated file: " + num(size) + " bytes, too short to be a GGUF file");
        if (load<uint32_t>(base) != kMagic) {
            std::string magic;
            for (int i = 0; i < 4; ++i) magic += char(base[i]);
            fail(0, "not a GGUF file: the magic is " + quoted(magic) + ", expected 'GGUF'");
        }
        pos = 4;
        uint32_t version = read<uint32_t>(nullptr, "the version");
        if (version == 1) fail(4, "unsupported GGUF version 1 (the obsolete v1 layout; supported: 2 and 3)");
        if (version != 0 && (version & 0xffff) == 0)
            fail(4,
                 "unsupported GGUF version " + num(version) +
                     ": this looks like a big-endian file, only little-endian GGUF is supported");
        if (version != 2 && version != 3) fail(4, "unsupported GGUF version " + num(version) + " (supported: 2 and 3)");
        f.version_ = version;
        nTensors = read<uint64_t>(nullptr, "the tensor count");
        nKv = read<uint64_t>(nullptr, "the metadata count");

        // Counts the rest of the file cannot hold are refused before anything
        // is reserved for them.
        uint64_t rest = left();
        if (nKv > rest / kMinKvBytes)
            fail(16,
                 "absurd metadata count " + num(nKv) + ": the " + num(rest) + " bytes after the header hold at most " +
                     num(rest / kMinKvBytes) + " entries (truncated or corrupt file)");
        uint64_t restForTensors = rest - nKv * kMinKvBytes;
        if (nTensors > restForTensors / kMinTensorInfoBytes)
            fail(8,
                 "absurd tensor count " + num(nTensors) + ": the " + num(restForTensors) +
                     " bytes left after the metadata hold at most " + num(restForTensors / kMinTensorInfoBytes) +
                     " tensor infos (truncated or corrupt file)");
        if (nKv > std::numeric_limits<uint32_t>::max() || nTensors > std::numeric_limits<uint32_t>::max())
            fail(8, "absurd counts: " + num(nKv) + " metadata entries and " + num(nTensors) + " tensors");
        uint64_t tables = nKv * (sizeof(Value) + sizeof(uint32_t)) + nTensors * (sizeof(TensorInfo) + sizeof(uint32_t));
        if (tables > tableBudget(size))
            fail(8,
                 "absurd counts: " + num(nKv) + " metadata entries and " + num(nTensors) + " tensors in a " +
                     num(size) + "-byte file");
    }

    void readMetadata(uint64_t nKv) {
        f.values_.reserve(size_t(nKv));
        for (uint64_t i = 0; i < nKv; ++i) {
            Subject s{"metadata", i, {}};
            uint64_t at = pos;
            Value v;
            v.key_ = readString(s, "key");
            if (v.key_.empty()) fail(at, "metadata entry #" + num(i) + " has an empty key");
            if (v.key_.size() > kMaxKeyBytes)
                fail(at,
                     "metadata key " + quoted(v.key_) + " is " + num(v.key_.size()) + " bytes long (at most " +
                         num(kMaxKeyBytes) + " allowed)");
            s.name = v.key_;
            s.named = true;
            uint64_t typeAt = pos;
            uint32_t type = read<uint32_t>(&s, "value type");
            if (!isKnownValueType(type)) fail(typeAt, s.describe() + ": unknown value type " + num(type));
            readValue(v, ValueType(type), s);
            f.values_.push_back(v);
        }
        rejectDuplicates(
            f.values_, [](const Value& v) { return v.key_; }, "metadata key");
    }

    void readAlignment() {
        const Value* a = f.find(kAlignmentKey);
        if (!a) return;
        uint64_t at = uint64_t(reinterpret_cast<const uint8_t*>(a->key_.data()) - base) - 8;
        if (a->type() != ValueType::UInt32)
            fail(at, std::string(kAlignmentKey) + " must be uint32, not " + std::string(valueTypeName(a->type())));
        uint32_t al = load<uint32_t>(a->data_);
        if (!isValidAlignment(al))
            fail(at, std::string(kAlignmentKey) + " " + num(al) + " is not a power of two and a multiple of 8");
        f.alignment_ = al;
    }

    void readTensorInfos(uint64_t nTensors) {
        f.tensors_.reserve(size_t(nTensors));
        for (uint64_t i = 0; i < nTensors; ++i) {
            Subject s{"tensor", i, {}};
            uint64_t at = pos;
            TensorInfo t;
            t.name = readString(s, "name");
            if (t.name.size() > kMaxTensorNameBytes)
                fail(at,
                     "tensor name " + quoted(t.name) + " is " + num(t.name.size()) + " bytes long (GGUF allows " +
                         num(kMaxTensorNameBytes) + ")");
            s.name = t.name;
            s.named = true;
            uint64_t dimsAt = pos;
            t.nDims = read<uint32_t>(&s, "dimension count");
            if (t.nDims > kMaxDims)
                fail(dimsAt,
                     s.describe() + ": " + num(t.nDims) + " dimensions (GGUF allows at most " + num(kMaxDims) + ")");
            readShape(t, s);
            uint64_t typeAt = pos;
            uint32_t type = read<uint32_t>(&s, "tensor type");
            auto traits = tensorTypeTraits(type);
            if (!traits) fail(typeAt, s.describe() + ": unknown tensor type " + num(type));
            t.type = TensorType(type);
            if (uint64_t(t.ne[0]) % traits->blockSize != 0)
                fail(typeAt,
                     s.describe() + ": row length " + num(uint64_t(t.ne[0])) + " is not a multiple of the " +
                         std::string(traits->name) + " block size " + num(traits->blockSize));
            uint64_t blocks = uint64_t(t.elements()) / traits->blockSize;
            if (blocks > std::numeric_limits<uint64_t>::max() / traits->blockBytes)
                fail(typeAt, s.describe() + ": its size in bytes overflows 64 bits");
            t.nbytes = size_t(blocks * traits->blockBytes);
            t.offset = read<uint64_t>(&s, "data offset");
            f.tensors_.push_back(t);
        }
        rejectDuplicates(
            f.tensors_, [](const TensorInfo& t) { return t.name; }, "tensor name");
    }

    // Dimensions are stored as uint64 but used as int64; the element count of
    // the non-zero dimensions must fit in int64 too, so that every partial
    // product (rows(), elements()) does.
    void readShape(TensorInfo& t, const Subject& s) {
        int64_t product = 1;
        for (uint32_t d = 0; d < t.nDims; ++d) {
            uint64_t at = pos;
            uint64_t n = read<uint64_t>(&s, "dimension");
            if (n > uint64_t(std::numeric_limits<int64_t>::max()))
                fail(at, s.describe() + ": dimension " + num(d) + " is " + num(n) + ", beyond the int64 range");
            if (n != 0 && product > std::numeric_limits<int64_t>::max() / int64_t(n))
                fail(at,
                     s.describe() + ": dimension " + num(d) + " = " + num(n) +
                         " makes the element count overflow int64");
            if (n != 0) product *= int64_t(n);
            t.ne[d] = int64_t(n);
        }
    }

    uint64_t offsetFieldAt(const TensorInfo& t) const {
        return uint64_t(reinterpret_cast<const uint8_t*>(t.name.data()) - base) + t.name.size() + 4 + 8 * t.nDims + 4;
    }

    void placeTensorData(uint64_t nTensors) {
        f.headerEnd_ = size_t(pos);
        uint64_t dataStart = alignUp(pos, f.alignment_);
        if (nTensors > 0 && dataStart > size)
            fail(pos,
                 "truncated file: the tensor data section starts at byte " + num(dataStart) + " (aligned to " +
                     num(f.alignment_) + ") but the file ends at byte " + num(size));
        f.dataOffset_ = std::min(dataStart, size);
        uint64_t dataBytes = size - f.dataOffset_;
        for (auto& t : f.tensors_) {
            auto who = [&] { return "tensor " + quoted(t.name); };
            if (t.offset % f.alignment_ != 0)
                fail(offsetFieldAt(t),
                     who() + ": data offset " + num(t.offset) + " is not a multiple of the alignment " +
                         num(f.alignment_));
            if (t.offset > dataBytes)
                fail(offsetFieldAt(t),
                     who() + ": data offset " + num(t.offset) + " lies past the end of the file (the data " +
                         "section holds " + num(dataBytes) + " bytes)");
            if (t.nbytes > dataBytes - t.offset)
                fail(offsetFieldAt(t),
                     who() + ": its " + num(t.nbytes) + " bytes of data from file byte " +
                         num(f.dataOffset_ + t.offset) + " run past the end of the file (" + num(size) + " bytes)");
            t.data = base + f.dataOffset_ + t.offset;
        }
    }

    // Sorts indices by name (ties by position) to find the first repeated
    // name in file order without a hash set's per-entry allocations.
    template <typename T, typename NameOf>
    void rejectDuplicates(const std::vector<T>& items, NameOf nameOf, const char* what) const {
        std::vector<uint32_t> order(items.size());
        for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
            auto na = nameOf(items[a]), nb = nameOf(items[b]);
            return na != nb ? na < nb : a < b;
        });
        uint64_t firstRepeat = std::numeric_limits<uint64_t>::max(), firstOriginal = 0;
        for (size_t i = 1; i < order.size(); ++i)
            if (nameOf(items[order[i]]) == nameOf(items[order[i - 1]]) && order[i] < firstRepeat) {
                firstRepeat = order[i];
                firstOriginal = order[i - 1];
            }
        if (firstRepeat == std::numeric_limits<uint64_t>::max()) return;
        auto name = nameOf(items[firstRepeat]);
        // The original is the first of the run of equal names.
        for (size_t i = 0; i < order.size(); ++i)
            if (nameOf(items[order[i]]) == name) {
                firstOriginal = order[i];
                break;
            }
        uint64_t at = uint64_t(reinterpret_cast<const uint8_t*>(name.data()) - base) - 8;
        fail(at,
             std::string("duplicate ") + what + " " + quoted(name) + " (entries #" + num(firstOriginal) + " and #" +
                 num(firstRepeat) + ")");
    }

    void parse() {
        uint64_t nTensors = 0, nKv = 0;
        readHeader(nTensors, nKv);
        readMetadata(nKv);
        readAlignment();
        readTensorInfos(nTensors);
        placeTensorData(nTensors);
    }
};

void parseInto(File& f, const uint8_t* data, uint64_t size) {
    Parser p{f, data, size};
    p.parse();
}

}  // namespace cairn::gguf
