#include "model/mamba2.h"

#include "cairn/error.h"
#include "memory/recurrent_state.h"
#include "model/architectures.h"
#include "model/hyperparameters.h"
#include "model/ops.h"
#include "model/ssm_ops.h"

#include <functional>
#include <string>

namespace cairn::model {
namespace {

// A per-head vector repeated for each of the head's channels.
std::vector<float> perChannel(const std::vector<float>& perHead, int64_t headDim) {
    std::vector<float> out;
    out.reserve(perHead.size() * size_t(headDim));
    for (float v : perHead) out.insert(out.end(), size_t(headDim), v);
    return out;
}

}  // namespace

std::unique_ptr<Model> loadMamba2(std::unique_ptr<gguf::File> file) {
    return std::make_unique<Mamba2Model>(std::move(file));
}

void readMamba2Params(const gguf::File& f, const std::string& arch, Mamba2Params& p) {
    const std::string a = arch + ".";
    p.conv = requiredInt(f, a + "ssm.conv_kernel");
    p.inner = intInRange(f, a + "ssm.inner_size", 1, kMaxFeedForward);
    p.state = requiredInt(f, a + "ssm.state_size");
    p.heads = intInRange(f, a + "ssm.time_step_rank", 1, p.inner);
    p.groups = intInRange(f, a + "ssm.group_count", 1, p.heads);
    if (p.inner % p.heads || p.heads % p.groups)
        throw Error("model",
                    "implausible Mamba-2 hyperparameters (" + a + "ssm.inner_size " + std::to_string(p.inner) +
                        ", ssm.time_step_rank " + std::to_string(p.heads) + ", ssm.group_count " +
                        std::to_string(p.groups) + ")");
    if (p.conv < 1 || p.conv > ssm::kMaxConv)
        throw Error("model",
                    a + "ssm.conv_kernel " + std::to_string(p.conv) + " is not supported (1 to " +
                        std::to_string(ssm::kMaxConv) + ")");
    if (p.state < 1 || p.state > ssm::kMaxState)
        throw Error("model",
                    a + "ssm.state_size " + std::to_string(p.state) + " is not supported (1 to " +
                        std::to_string(ssm::kMaxState) + ")");
    // Each group's channels are scanned as whole lane blocks.
    if ((p.inner / p.groups) % ssm::kLanes)
        throw Error("model",
                    "Mamba-2 groups of " + std::to_string(p.inner / p.groups) +
                        " channels are not supported (a multiple of " + std::to_string(ssm::kLanes) + " is needed)");
}

Mamba2Layer bindMamba2Layer(TensorBinder& bind, const std::string& b, const Mamba2Params& p) {
    const int64_t e = p.embedding, di = p.inner, nh = p.heads, cc = p.convChannels();
    Mamba2Layer L;
    L.in = bind.matrix(b + "ssm_in.weight", e, p.inProj());
    L.convW = ssm::packLanes(bind.table(b + "ssm_conv1d.weight", p.conv, cc).data(), cc, p.conv);
    L.convB = bind.has(b + "ssm_conv1d.bias") ? bind.vec(b + "ssm_conv1d.bias", cc) : std::vector<float>(size_t(cc));
    L.dtBias = perChannel(bind.vec(b + "ssm_dt.bias", nh), p.headDim());
    // A: one decay per head, the same for every state n of the head's channels.
    L.A = perChannel(bind.table(b + "ssm_a", 1, nh), p.headDim());
    L.D = perChannel(bind.table(b + "ssm_d", 1, nh), p.headDim());
    L.groupNorm = bind.table(b + "ssm_norm.weight", di / p.groups, p.groups);
    L.out = bind.matrix(b + "ssm_out.weight", di, e);
    return L;
}

memory::RecurrentShape mamba2StateShape(const Mamba2Params& p, int64_t layers) {
    return memory::RecurrentShape{layers, p.inner, p.conv - 1, p.state, ssm::kLanes, p.convChannels()};
}

void mamba2Mix(const Mamba2Params& p, const Mamba2Layer& L, memory::RecurrentState& st, int64_t l, const float* xn,
               int64_t T, float* out, ExecContext& ctx) {
    const int64_t e = p.embedding, di = p.inner, ds = p.state, ng = p.groups, nh = p.heads;
    const int64_t cc = p.convChannels(), np = p.inProj(), hd = p.headDim(), cpg = di / ng;
    std::vector<float> proj(size_t(T * np)), xbc(size_t(T * cc)), dt(size_t(T * di)), y(size_t(T * di));
    // proj[t] = [z (di) | xBC (cc) | dt (heads)]
    tensor::matmul(L.in, xn, e, T, proj.data(), np, ctx);
    ssm::conv1dSilu(proj.data() + di, np, T, cc, p.conv, L.convW.data(), L.convB.data(), st.conv(l), xbc.data(), cc,
                    ctx);
    // Each head's dt for each of its channels.
    forEachPosition(T, ctx, [&](int64_t t) {
        const float* dh = &proj[size_t(t * np + di + cc)];
        float* o = &dt[size_t(t * di)];
        for (int64_t h = 0; h < nh; ++h)
            for (int64_t i = 0; i < hd; ++i) o[h * hd + i] = dh[h];
    });
    // One scan per group: its heads share B and C.
    for (int64_t g = 0; g < ng; ++g) {
        const int64_t c0 = g * cpg, blk0 = c0 / ssm::kLanes;
        ssm::ScanInputs in;
        in.tokens = T;
        in.channels = cpg;
        in.stateSize = ds;
        in.x = xbc.data() + c0;
        in.ldx = cc;
        in.dt = dt.data() + c0;
        in.lddt = di;
        in.dtBias = L.dtBias.data() + c0;
        in.B = xbc.data() + di + g * ds;
        in.C = xbc.data() + di + ng * ds + g * ds;
        in.ldbc = cc;
        in.decayA = L.A.data() + c0;
        in.D = L.D.data() + c0;
        in.z = proj.data() + c0;
        in.ldz = np;
        ssm::selectiveScan(in, st.ssm(l) + blk0 * ds * ssm::kLanes, y.data() + c0, di, ctx);
    }
    // Grouped RMSNorm of the gated output, then the out-projection.
    forEachPosition(T, ctx, [&](int64_t t) {
        for (int64_t g = 0; g < ng; ++g)
            rmsNorm(&y[size_t(t * di + g * cpg)], &L.groupNorm[size_t(g * cpg)], &y[size_t(t * di + g * cpg)], cpg,
                    p.eps);
    });
    tensor::matmul(L.out, y.data(), di, T, out, e, ctx);
}

Mamba2Model::Mamba2Model(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {
    readParams();
    bindTensors();
    info_.vocabSize = p_.vocab;
    info_.trainedContext = p_.trainedContext;
    info_.layers = p_.layers;
    info_.embedding = p_.embedding;
    info_.recurrent = true;
}

void Mamba2Model::readParams() {
    const gguf::File& f = *file_;
    const std::string a = f.architecture() + ".";
    p_.embedding = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
    p_.layers = intInRange(f, a + "block_count", 1, kMaxLayers);
    p_.eps = normEpsilon(f, a + "attention.layer_norm_rms_epsilon");
    p_.trainedContext = intInRange(f, a + "context_length", 0, 0, kMaxContext);
    readMamba2Params(f, f.architecture(), p_);
}

void Mamba2Model::bindTensors() {
    TensorBinder bind(*file_, ownedWeights_.get());

    head_ = bind.vocabularyHead(p_.embedding);
    p_.vocab = head_.vocab;
    for (int64_t i = 0; i < p_.layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        norms_.push_back(bind.vec(b + "attn_norm.weight", p_.embedding));
        layers_.push_back(bindMamba2Layer(bind, b, p_));
    }
    bind.requireAllUsed("mamba2");
}

std::unique_ptr<Memory> Mamba2Model::newMemory(const MemoryOptions&) const {
    return std::make_unique<memory::RecurrentState>(mamba2StateShape(p_, p_.layers));
}

void Mamba2Model::forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                          ExecContext& ctx) const {
    auto* st = dynamic_cast<memory::RecurrentState*>(&mem);
    const memory::RecurrentShape want = mamba2StateShape(p_, p_.layers);
    if (!st || st->shape().layers != want.layers || st->shape().channels != want.channels ||
        st->shape().convWidth != want.convWidth || st->shape().stateSize != want.stateSize ||
        st->shape().lanes != want.lanes || st->shape().convChannels != want.convChannels)
        throw Error("model", "this memory was not made by this model");
    const int64_t T = int64_t(tokens.size());
    if (T == 0) return;

    const int64_t e = p_.embedding;
    std::vector<float> x(size_t(T * e)), xn(size_t(T * e));
    embedTokens(head_.tokenEmbd, tokens, x.data(), e);
    for (int64_t l = 0; l < p_.layers; ++l) {
        ctx.atLayer(l, p_.layers);
        forEachPosition(T, ctx, [&](int64_t t) {
            rmsNorm(&x[size_t(t * e)], norms_[size_t(l)].data(), &xn[size_t(t * e)], e, p_.eps);
        });
        mamba2Mix(p_, layers_[size_t(l)], *st, l, xn.data(), T, xn.data(), ctx);
        forEachPosition(T, ctx, [&](int64_t t) { addInPlace(&x[size_t(t * e)], &xn[size_t(t * e)], e); });
    }
    st->advance(T);

    if (!logits) return;
    head_.logits(x.data(), xn.data(), T, allLogits ? 0 : T - 1, e, p_.eps, logits, ctx);
}

}  // namespace cairn::model
