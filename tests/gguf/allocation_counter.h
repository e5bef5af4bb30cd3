// Counts the bytes allocated through operator new while a window is open.
// Include in exactly one source file of a test executable: it replaces the
// global operator new/delete of that executable.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace cairn::test::alloc {

inline std::atomic<bool> tracking{false};
inline std::atomic<int64_t> current{0};  // bytes allocated minus freed since the window opened
inline std::atomic<int64_t> peak{0};

// Opens a counting window: current and peak restart at 0.
inline void open() {
    current = 0;
    peak = 0;
    tracking = true;
}
inline void close() { tracking = false; }

// Each block carries its size in a 16-byte header (keeping malloc's alignment).
constexpr size_t kHeader = 16;

inline void* allocate(size_t n) noexcept {
    auto* p = static_cast<unsigned char*>(std::malloc(n + kHeader));
    if (!p) return nullptr;
    *reinterpret_cast<size_t*>(p) = n;
    if (tracking.load(std::memory_order_relaxed)) {
        int64_t now = current.fetch_add(int64_t(n), std::memory_order_relaxed) + int64_t(n);
        int64_t seen = peak.load(std::memory_order_relaxed);
        while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
    }
    return p + kHeader;
}

inline void release(void* q) noexcept {
    if (!q) return;
    auto* p = static_cast<unsigned char*>(q) - kHeader;
    if (tracking.load(std::memory_order_relaxed))
        current.fetch_sub(int64_t(*reinterpret_cast<size_t*>(p)), std::memory_order_relaxed);
    std::free(p);
}

}  // namespace cairn::test::alloc

void* operator new(std::size_t n) {
    if (void* p = cairn::test::alloc::allocate(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = cairn::test::alloc::allocate(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return cairn::test::alloc::allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return cairn::test::alloc::allocate(n); }
void operator delete(void* p) noexcept { cairn::test::alloc::release(p); }
void operator delete[](void* p) noexcept { cairn::test::alloc::release(p); }
void operator delete(void* p, std::size_t) noexcept { cairn::test::alloc::release(p); }
void operator delete[](void* p, std::size_t) noexcept { cairn::test::alloc::release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { cairn::test::alloc::release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { cairn::test::alloc::release(p); }
