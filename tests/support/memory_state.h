// A memory's whole state as bytes (every StateTensor's rows, without their
// padding): what the invariant tests compare bit for bit.
#pragma once

#include "cairn/model.h"

#include <cstdint>
#include <vector>

namespace cairn::test {

std::vector<uint8_t> stateBytes(Memory& mem);

}  // namespace cairn::test
