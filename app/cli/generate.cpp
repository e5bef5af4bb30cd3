// cairn-cli generate -m MODEL -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P]
//   [--repeat-penalty R] [--frequency-penalty F] [--presence-penalty P] [--seed S]
//   [-t THREADS] [--chunk C] [--ctx N] [--kv f16|f32] [--calibrate | --kernel-cache FILE]
// Streams the continuation of TEXT to stdout (BOS as the vocabulary says,
// control tokens in TEXT parsed), stops at an end-of-generation token.
#include "command.h"
#include "kernel_setup.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/sampler.h"
#include "cairn/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace cairn::cli {

int runGenerate(Args& args) {
    const std::string modelPath = args.require("-m", "--model");
    const std::string prompt = args.require("-p", "--prompt");
    const int64_t n = int64_t(args.number("-n", "--n-predict", 128));
    SamplerOptions so;
    so.temperature = float(args.number("", "--temp", so.temperature));
    so.topK = int32_t(args.number("", "--top-k", so.topK));
    so.topP = float(args.number("", "--top-p", so.topP));
    so.minP = float(args.number("", "--min-p", so.minP));
    so.repeatPenalty = float(args.number("", "--repeat-penalty", so.repeatPenalty));
    so.frequencyPenalty = float(args.number("", "--frequency-penalty", so.frequencyPenalty));
    so.presencePenalty = float(args.number("", "--presence-penalty", so.presencePenalty));
    so.seed = uint64_t(args.number("", "--seed", 0));
    const int threads = int(args.number("-t", "--threads", 2));
    const int64_t chunk = int64_t(args.number("", "--chunk", double(kDefaultPrefillChunk)));
    const int64_t ctxOpt = int64_t(args.number("-c", "--ctx", 0));
    const std::string kv = args.option("", "--kv").value_or("f16");
    const KernelSetup kernels = kernelSetupFrom(args);
    args.positionals();
    if (kv != "f16" && kv != "f32") throw Error("cairn-cli generate", "--kv must be f16 or f32");
    setUpKernels(kernels, threads);
    if (n < 0) throw Error("cairn-cli generate", "-n must not be negative");

    using Clock = std::chrono::steady_clock;
    auto model = Model::load(modelPath);
    const Tokenizer& tok = model->tokenizer();
    std::vector<int32_t> tokens = tok.encode(prompt, true, true);
    if (tokens.empty()) throw Error("cairn-cli generate", "the prompt gives no tokens");

    MemoryOptions mo;
    const int64_t trained = model->info().trainedContext > 0 ? model->info().trainedContext : 4096;
    mo.contextSize =
        ctxOpt > 0 ? ctxOpt : std::min<int64_t>(trained, std::max<int64_t>(4096, int64_t(tokens.size()) + n));
    mo.kvType = kv == "f32" ? KvType::F32 : KvType::F16;
    if (int64_t(tokens.size()) >= mo.contextSize)
        throw Error("cairn-cli generate",
                    "the prompt (" + std::to_string(tokens.size()) + " tokens) does not fit the context of " +
                        std::to_string(mo.contextSize));
    auto mem = model->newMemory(mo);
    ExecContext ctx(threads);
    Sampler sampler(so);
    StreamDecoder out(tok);
    std::vector<float> logits(size_t(model->info().vocabSize));

    const auto t0 = Clock::now();
    prefill(*model, *mem, tokens, chunk, false, logits.data(), ctx);
    const auto t1 = Clock::now();
    int64_t generated = 0;
    std::vector<int32_t> history = tokens;
    while (generated < n) {
        const int32_t id = sampler.sample(logits, history);
        if (tok.isEndOfGeneration(id)) break;
        history.push_back(id);
        ++generated;
        const std::string piece = out.push(id);
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        if (generated == n) break;
        if (mem->size() >= mem->capacity()) {
            std::fprintf(stderr, "\n[context full]\n");
            break;
        }
        model->forward(*mem, std::span(&id, 1), false, logits.data(), ctx);
    }
    const std::string rest = out.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fputc('\n', stdout);
    const auto t2 = Clock::now();
    const double pp = std::chrono::duration<double>(t1 - t0).count(),
                 tg = std::chrono::duration<double>(t2 - t1).count();
    std::fprintf(stderr, "prompt %zu tokens in %.2f s (%.1f t/s), generated %lld tokens in %.2f s (%.1f t/s)\n",
                 tokens.size(), pp, double(tokens.size()) / pp, (long long)generated, tg,
                 generated ? double(generated) / tg : 0.0);
    return 0;
}

}  // namespace cairn::cli
