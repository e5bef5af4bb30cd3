// The oracle for the SIMD kernels: dequantize the row, then accumulate the
// products in double precision in element order and round once to float.
#include "tensor/quant.h"

#include "cairn/error.h"

#include <string>
#include <vector>

namespace cairn::tensor {

float dotReference(TensorType type, const void* row, const float* x, int64_t n) {
    if (n < 0) throw Error("dotReference", "negative length " + std::to_string(n));
    std::vector<float> w(static_cast<size_t>(n));
    dequantizeRow(type, row, w.data(), n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(w[size_t(i)]) * double(x[i]);
    return float(sum);
}

}  // namespace cairn::tensor
