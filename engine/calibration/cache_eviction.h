// Dropping a buffer from every cache level, so the calibration's decode passes
// read their weights from memory whatever the size of the last-level cache.
#pragma once

#include "cairn/exec.h"

#include <cstddef>
#include <cstdint>

namespace cairn::calibration {

// Whether this CPU and build can evict (x86-64 with CLFLUSHOPT).
bool canEvictFromCaches();

// Writes back and invalidates every cache line of [p, p + bytes), split over
// ctx's threads; does nothing where canEvictFromCaches() is false.
void evictFromCaches(const uint8_t* p, size_t bytes, ExecContext& ctx);

}  // namespace cairn::calibration
