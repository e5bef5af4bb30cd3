// Opening (memory mapping) a GGUF file and looking things up in it. The
// parsing and validation is reader.cpp's.
#include "format.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cairn::gguf {

struct File::Mapping {
    void* addr = nullptr;
    size_t size = 0;
    ~Mapping() {
        if (addr && size) munmap(addr, size);
    }
};

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::open(const std::string& path) {
    File f;
    f.path_ = path;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path, "not a regular file");
    }
    f.size_ = uint64_t(st.st_size);
    f.mapping_ = std::make_unique<Mapping>();
    if (f.size_ > 0) {
        void* addr = mmap(nullptr, size_t(f.size_), PROT_READ, MAP_SHARED, fd, 0);
        if (addr == MAP_FAILED) {
            int err = errno;
            ::close(fd);
            throw Error(path, std::string("cannot map: ") + std::strerror(err));
        }
        f.mapping_->addr = addr;
        f.mapping_->size = size_t(f.size_);
        f.base_ = static_cast<const uint8_t*>(addr);
    }
    ::close(fd);
    parseInto(f, f.base_, f.size_);
    return f;
}

File File::fromMemory(const uint8_t* data, size_t size, std::string name) {
    File f;
    f.path_ = std::move(name);
    f.base_ = data;
    f.size_ = size;
    parseInto(f, data, size);
    return f;
}

void File::releasePages(const uint8_t* p, size_t n) const {
    if (!mapping_ || !mapping_->addr || p < base_ || n > size_ || size_t(p - base_) > size_ - n) return;
    const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(page - 1);
    // A read-only shared file mapping: MADV_DONTNEED only unmaps the pages
    // (the page cache keeps them until the system needs the memory).
    if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

const Value* File::find(std::string_view key) const {
    for (const auto& v : values_)
        if (v.key_ == key) return &v;
    return nullptr;
}

const Value& File::get(std::string_view key) const {
    if (auto* v = find(key)) return *v;
    throw Error(path_, "missing metadata key " + format::quoted(key));
}

std::string_view File::getString(std::string_view key, std::string_view fallback) const {
    auto* v = find(key);
    return v ? v->asString() : fallback;
}

int64_t File::getInt(std::string_view key, int64_t fallback) const {
    auto* v = find(key);
    return v ? v->asInt() : fallback;
}

double File::getFloat(std::string_view key, double fallback) const {
    auto* v = find(key);
    return v ? v->asFloat() : fallback;
}

bool File::getBool(std::string_view key, bool fallback) const {
    auto* v = find(key);
    return v ? v->asBool() : fallback;
}

const TensorInfo* File::findTensor(std::string_view name) const {
    for (const auto& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

const TensorInfo& File::tensor(std::string_view name) const {
    if (auto* t = findTensor(name)) return *t;
    throw Error(path_, "missing tensor " + format::quoted(name));
}

}  // namespace cairn::gguf
