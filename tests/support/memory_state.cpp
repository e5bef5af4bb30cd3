#include "memory_state.h"

#include "cairn/tensor_type.h"

namespace cairn::test {

std::vector<uint8_t> stateBytes(Memory& mem) {
    std::vector<uint8_t> out;
    for (const StateTensor& t : mem.state()) {
        const size_t rowBytes = size_t(t.cols) * (t.typeId == int(TensorType::F32) ? 4 : 2);
        for (int64_t r = 0; r < t.rows; ++r) {
            const uint8_t* p = t.data + size_t(r) * t.rowStride;
            out.insert(out.end(), p, p + rowBytes);
        }
    }
    return out;
}

}  // namespace cairn::test
