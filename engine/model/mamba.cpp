#include "model/mamba.h"

#include "cairn/error.h"
#include "memory/recurrent_state.h"
#include "model/architectures.h"
#include "model/hyperparameters.h"
#include "model/ops.h"
#include "model/ssm_ops.h"

#include <functional>
#include <string>

namespace cairn::model {
std::unique_ptr<Model> loadMamba(std::unique_ptr<gguf::File> file) {
    return std::make_unique<MambaModel>(std::move(file));
}

MambaModel::MambaModel(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {
    readParams();
    bindTensors();
    info_.vocabSize = p_.vocab;
    info_.trainedContext = p_.trainedContext;
    info_.layers = p_.layers;
    info_.embedding = p_.embedding;
    info_.recurrent = true;
}

void MambaModel::readParams() {
    const gguf::File& f = *file_;
    const std::string a = f.architecture() + ".";
    p_.embedding = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
    p_.layers = intInRange(f, a + "block_count", 1, kMaxLayers);
    p_.conv = requiredInt(f, a + "ssm.conv_kernel");
    p_.inner = intInRange(f, a + "ssm.inner_size", 1, kMaxFeedForward);
    p_.state = requiredInt(f, a + "ssm.state_size");
    p_.dtRank = intInRange(f, a + "ssm.time_step_rank", 1, p_.inner);
    p_.eps = normEpsilon(f, a + "attention.layer_norm_rms_epsilon");
    p_.trainedContext = intInRange(f, a + "context_length", 0, 0, kMaxContext);
    if (p_.conv < 1 || p_.conv > ssm::kMaxConv)
        throw Error("model",
                    "ssm.conv_kernel " + std::to_string(p_.conv) + " is not supported (1 to " +
                        std::to_string(ssm::kMaxConv) + ")");
    if (p_.state < 1 || p_.state > ssm::kMaxState)
        throw Error("model",
                    "ssm.state_size " + std::to_string(p_.state) + " is not supported (1 to " +
                        std::to_string(ssm::kMaxState) + ")");
    if (f.getBool(a + "ssm.dt_b_c_rms", false))
        throw Error("model", "ssm.dt_b_c_rms (RMSNorm of dt, B and C, as in Falcon-Mamba) is not supported");
    if (f.getInt(a + "ssm.group_count", 0) > 1)
        throw Error("model", "grouped SSM heads (Mamba-2 style ssm.group_count) are not supported by mamba");
}

void MambaModel::bindTensors() {
    TensorBinder bind(*file_, ownedWeights_.get());

    head_ = bind.vocabularyHead(p_.embedding);
    p_.vocab = head_.vocab;

    const int64_t e = p_.embedding, di = p_.inner, ds = p_.state;
    layers_.resize(size_t(p_.layers));
    for (int64_t i = 0; i < p_.layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        auto& L = layers_[size_t(i)];
        L.norm = bind.vec(b + "attn_norm.weight", e);
        L.in = bind.matrix(b + "ssm_in.weight", e, 2 * di);
        // Small per-channel tables are repacked once into the kernels' lane layout.
        L.convW = ssm::packLanes(bind.table(b + "ssm_conv1d.weight", p_.conv, di).data(), di, p_.conv);
        L.convB = bind.vec(b + "ssm_conv1d.bias", di);
        L.xProj = bind.matrix(b + "ssm_x.weight", di, p_.dtRank + 2 * ds);
        L.dtProj = bind.matrix(b + "ssm_dt.weight", p_.dtRank, di);
        L.dtBias = bind.vec(b + "ssm_dt.bias", di);
        L.A = ssm::packLanes(bind.table(b + "ssm_a", ds, di).data(), di, ds);
        L.D = bind.vec(b + "ssm_d", di);
        L.out = bind.matrix(b + "ssm_out.weight", di, e);
    }
    bind.requireAllUsed("mamba");
}

std::unique_ptr<Memory> MambaModel::newMemory(const MemoryOptions&) const {
    return std::make_unique<memory::RecurrentState>(
        memory::RecurrentShape{p_.layers, p_.inner, p_.conv - 1, p_.state, ssm::kLanes});
}

void MambaModel::forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                         ExecContext& ctx) const {
    auto* st = dynamic_cast<memory::RecurrentState*>(&mem);
    if (!st || st->shape().layers != p_.layers || st->shape().channels != p_.inner ||
        st->shape().convWidth != p_.conv - 1 || st->shape().stateSize != p_.state || st->shape().lanes != ssm::kLanes)
        throw Error("model", "this memory was not made by this model");
    const int64_t T = int64_t(tokens.size());
    if (T == 0) return;

    const int64_t e = p_.embedding, di = p_.inner, ds = p_.state, nx = p_.dtRank + 2 * ds;
    std::vector<float> x(size_t(T * e)), xn(size_t(T * e)), xz(size_t(T * 2 * di)), xc(size_t(T * di)),
        dbl(size_t(T * nx)), dt(size_t(T * di)), y(size_t(T * di));
    // Throws on a bad token id before any state changes.
    embedTokens(head_.tokenEmbd, tokens, x.data(), e);

    for (int64_t l = 0; l < p_.layers; ++l) {
        ctx.atLayer(l, p_.layers);
        const MambaLayer& L = layers_[size_t(l)];
        forEachPosition(T, ctx,
                        [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.norm.data(), &xn[size_t(t * e)], e, p_.eps); });
        // xz[t] = [x (di) | z (di)]
        if (T == 1) {
            // Decode: each block of channels' conv as soon as its x rows are
            // written, on that thread, instead of a pass of its own on one
            // thread (7 us a layer). In one process alternating every 16
            // tokens (Intel Xeon family 6 model 207, 2 threads), time a
            // token: mamba-370m Q8_0 +1.9, +4.9, +1.7, +2.5, +2.2 % faster;
            // F16 -0.2, +4.9, -0.2, -1.4 % (its conv is a smaller share).
            const tensor::RowsDone conv{ssm::kLanes, [&](int64_t r0, int64_t r1) {
                                            if (r0 < di)
                                                ssm::conv1dSiluOneToken(xz.data(), r0, std::min(r1, di), di, p_.conv,
                                                                        L.convW.data(), L.convB.data(), st->conv(l),
                                                                        xc.data());
                                        }};
            tensor::matmul(L.in, xn.data(), e, T, xz.data(), 2 * di, ctx, conv);
        } else {
            tensor::matmul(L.in, xn.data(), e, T, xz.data(), 2 * di, ctx);
            ssm::conv1dSilu(xz.data(), 2 * di, T, di, p_.conv, L.convW.data(), L.convB.data(), st->conv(l), xc.data(),
                            di, ctx);
        }
        // dbl[t] = [dt_low (dtRank) | B (ds) | C (ds)]
        tensor::matmul(L.xProj, xc.data(), di, T, dbl.data(), nx, ctx);

        ssm::ScanInputs in;
        in.tokens = T;
        in.channels = di;
        in.stateSize = ds;
        in.x = xc.data();
        in.ldx = di;
        in.dt = dt.data();
        in.lddt = di;
        in.dtBias = L.dtBias.data();
        in.B = dbl.data() + p_.dtRank;
        in.C = dbl.data() + p_.dtRank + ds;
        in.ldbc = nx;
        in.A = L.A.data();
        in.D = L.D.data();
        in.z = xz.data() + di;
        in.ldz = 2 * di;
        if (T == 1) {
            // Decode: each block of channels' scan as soon as its Δ rows are
            // written, on that thread, as the conv above: one wait a layer
            // less, and the scan of one thread overlaps the other's stream.
            // In one process alternating every 16 tokens (Intel Xeon family 6
            // model 207, 2 threads, a slow stretch of the host), the Δ
            // projection and scan took, separate / fused, µs a token:
            // mamba-370m Q8_0 1324 / 1243, 1339 / 1245, 1488 / 1396, 1706 /
            // 1617; F16 1940 / 1867, 1854 / 1765 (about 0.5 % of a token,
            // within the whole token's noise: -0.7 to +1.7 %).
            const tensor::RowsDone scan{ssm::kLanes, [&](int64_t r0, int64_t r1) {
                                            ssm::selectiveScanOneToken(in, st->ssm(l), y.data(), r0, r1);
                                        }};
            tensor::matmul(L.dtProj, dbl.data(), nx, T, dt.data(), di, ctx, scan);
        } else {
            tensor::matmul(L.dtProj, dbl.data(), nx, T, dt.data(), di, ctx);
            ssm::selectiveScan(in, st->ssm(l), y.data(), di, ctx);
        }

        // The scan carries every position; the output projection only the
        // positions whose logits are wanted.
        const int64_t first = firstOutputPosition(l, p_.layers, T, allLogits, logits != nullptr);
        if (first < T) tensor::matmul(L.out, &y[size_t(first * di)], di, T - first, &xn[size_t(first * e)], e, ctx);
        forEachPosition(first, T, ctx, [&](int64_t t) { addInPlace(&x[size_t(t * e)], &xn[size_t(t * e)], e); });
    }
    st->advance(T);

    if (!logits) return;
    head_.logits(x.data(), xn.data(), T, allLogits ? 0 : T - 1, e, p_.eps, logits, ctx);
}

}  // namespace cairn::model
