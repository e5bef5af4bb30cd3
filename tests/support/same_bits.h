// Bit-for-bit equality of float results, the comparison of every invariant
// test (batched ≡ sequential, threads, chunk sizes, reuse ≡ fresh, snapshot
// restore): == would call -0 and +0 equal and NaN unequal to itself.
#pragma once

#include <cstring>
#include <span>

namespace cairn::test {

inline bool sameBits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace cairn::test
