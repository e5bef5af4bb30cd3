// Lowering a thread to ThreadPriority::Background (nice kBackgroundNice).
#pragma once

namespace cairn::exec {

// Lowers the calling thread to nice kBackgroundNice, once per thread (Linux
// keeps a nice value per thread; elsewhere it does nothing).
void lowerThisThreadOnce();

}  // namespace cairn::exec
