// avx512 kernels (work in progress: not registered yet).
#include "tensor/kernels_common.h"

namespace cairn::tensor::kernels {
const KernelSet* avx512Kernels() { return nullptr; }
} // namespace cairn::tensor::kernels
