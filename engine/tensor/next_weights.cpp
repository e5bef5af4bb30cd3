#include "tensor/next_weights.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace cairn::tensor {

NextLoopReads NextWeights::after(const MatrixView& w) {
    const Region here{w.data, size_t(w.rows) * w.rowStride};
    if (last_) {
        if (next_.size() >= kMaxEntries && !next_.count(last_)) next_.clear();
        next_[last_] = here;
    }
    last_ = w.data;
    const auto it = next_.find(w.data);
    if (it == next_.end() || headBytes_ == 0) return {};
    return {it->second.data, it->second.bytes, headBytes_};
}

size_t NextWeights::defaultHeadBytes() {
    const char* env = std::getenv("CAIRN_IDLE_PREFETCH");
    if (env && std::strcmp(env, "off") == 0) return 0;
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? size_t(l2) / 2 : size_t(512) * 1024;
}

}  // namespace cairn::tensor
