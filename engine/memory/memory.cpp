#include "cairn/error.h"
#include "cairn/model.h"

namespace cairn {

// Memory kinds that cannot be snapshotted say so instead of silently saving nothing.
std::vector<StateTensor> Memory::state() { throw Error("memory", "this memory kind does not support snapshots"); }

void Memory::resizeForRestore(int64_t) { throw Error("memory", "this memory kind does not support snapshots"); }

void Memory::restoreCheckpoint(const Memory&) { throw Error("memory", "this memory kind does not take checkpoints"); }

}  // namespace cairn
