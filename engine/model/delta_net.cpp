#include "model/delta_net.h"

#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace cairn::model {
namespace {

// x / max(‖x‖, eps), the norm summed in double (as rmsNorm does).
void l2Normalize(const float* x, float* y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
    const float inv = float(1.0 / std::max(std::sqrt(sum), double(eps)));
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * inv;
}

float softplus(float v) { return v > 20.0f ? v : std::log1p(std::exp(v)); }

void headStep(const DeltaNetInputs& in, int64_t t, int64_t j, float* S, float* q, float* k, float* d, float* o,
              float* yt) {
    const int64_t dk = in.keyDim, dv = in.valueDim, kh = j % in.keyHeads;
    const float* row = in.qkv + t * in.ldqkv;
    l2Normalize(row + kh * dk, q, dk, in.eps);
    l2Normalize(row + (in.keyHeads + kh) * dk, k, dk, in.eps);
    const float* v = row + 2 * in.keyHeads * dk + j * dv;
    const float beta = 1.0f / (1.0f + std::exp(-in.beta[t * in.ldba + j]));
    const float decay = std::exp(in.A[j] * softplus(in.alpha[t * in.ldba + j] + in.dtBias[j]));
    // S ← decay·S; d = Sᵀk, accumulated row by row of S (k index outer) in a fixed order.
    std::fill(d, d + dv, 0.0f);
    for (int64_t a = 0; a < dk; ++a) {
        float* s = S + a * dv;
        for (int64_t b = 0; b < dv; ++b) {
            s[b] *= decay;
            d[b] += s[b] * k[a];
        }
    }
    for (int64_t b = 0; b < dv; ++b) d[b] = beta * (v[b] - d[b]);
    // S ← S + k dᵀ; o = Sᵀq.
    std::fill(o, o + dv, 0.0f);
    for (int64_t a = 0; a < dk; ++a) {
        float* s = S + a * dv;
        for (int64_t b = 0; b < dv; ++b) {
            s[b] += k[a] * d[b];
            o[b] += s[b] * q[a];
        }
    }
    const float scale = float(1.0 / std::sqrt(double(dk)));
    for (int64_t b = 0; b < dv; ++b) o[b] *= scale;
    rmsNorm(o, in.norm, o, dv, in.eps);
    const float* z = in.z + t * in.ldz + j * dv;
    for (int64_t b = 0; b < dv; ++b) yt[b] = o[b] * silu(z[b]);
}

}  // namespace

void gatedDeltaRule(const DeltaNetInputs& in, float* state, float* y, int64_t ldy, ExecContext& ctx) {
    if (in.tokens <= 0) return;
    const int64_t dk = in.keyDim, dv = in.valueDim;
    // One task per value head: tiny chunks (decode) stay on one thread.
    const int64_t grain = in.tokens * dk * dv * in.valueHeads < (int64_t(1) << 15) ? in.valueHeads : 1;
    ctx.parallelFor(in.valueHeads, grain, [&](int64_t begin, int64_t end) {
        std::vector<float> q(static_cast<size_t>(dk)), k(q.size()), d(static_cast<size_t>(dv)), o(d.size());
        for (int64_t j = begin; j < end; ++j)
            for (int64_t t = 0; t < in.tokens; ++t)
                headStep(in, t, j, state + j * dk * dv, q.data(), k.data(), d.data(), o.data(), y + t * ldy + j * dv);
    });
}

}  // namespace cairn::model
