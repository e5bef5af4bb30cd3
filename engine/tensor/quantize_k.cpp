// Reference quantizers of the K formats (ports of ggml's quantize_row_q*_K_ref).
#include "tensor/quant_k.h"

#include "cairn/error.h"

namespace cairn::tensor {

void quantizeRowQ2_K(const float*, BlockQ2_K*, int64_t) { throw Error("quantize", "Q2_K not implemented yet"); }
void quantizeRowQ3_K(const float*, BlockQ3_K*, int64_t) { throw Error("quantize", "Q3_K not implemented yet"); }
void quantizeRowQ4_K(const float*, BlockQ4_K*, int64_t) { throw Error("quantize", "Q4_K not implemented yet"); }
void quantizeRowQ5_K(const float*, BlockQ5_K*, int64_t) { throw Error("quantize", "Q5_K not implemented yet"); }
void quantizeRowQ6_K(const float*, BlockQ6_K*, int64_t) { throw Error("quantize", "Q6_K not implemented yet"); }

} // namespace cairn::tensor
