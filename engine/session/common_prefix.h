// Length of the longest common prefix of two sequences (token ids, text):
// how much of a conversation's memory a new prompt can keep.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace cairn::session {

template <class A, class B>
size_t commonPrefix(const A& a, const B& b) {
    const auto n = std::ptrdiff_t(std::min(std::size(a), std::size(b)));
    return size_t(std::mismatch(std::begin(a), std::begin(a) + n, std::begin(b)).first - std::begin(a));
}

}  // namespace cairn::session
