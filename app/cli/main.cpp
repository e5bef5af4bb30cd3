// cairn-cli: inspect, tokenize, generate, dump, bench, synth, template, chat-bench.
#include "command.h"

#include "cairn/error.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <map>

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: cairn-cli COMMAND [options]\n"
                 "commands:\n"
                 "  inspect MODEL.gguf [--tensors] [--json] [--ctx N]   describe a model file\n"
                 "  template (-m MODEL.gguf | --template FILE) --messages M.json [--add-generation-prompt] [--bos S] [--eos S]\n"
                 "                                                   render a conversation with a chat template\n"
                 "  tokenize -m MODEL.gguf [--bos] [--special] [--json] TEXT   token ids and pieces\n"
                 "  bench-kernels [--types Q4_0,F16] [--rows R] [--cols C] [-p TOKENS] [-t N] [-r N] [--path P]\n"
                 "                                                   matmul GFLOP/s (prefill) and GB/s (decode)\n"
                 "  dump -m MODEL --cases CASES.json -o OUT.json [-t N] [--chunk C] [--kv f16|f32]\n"
                 "                                                   logits and greedy ids in the reference schema\n");
}

} // namespace

int main(int argc, char** argv) {
    using namespace cairn::cli;
    const std::map<std::string, int (*)(Args&)> commands = {
        {"inspect", runInspect},
        {"template", runTemplate},
        {"tokenize", runTokenize},
        {"bench-kernels", runBenchKernels},
        {"dump", runDump},
        {"chat-bench", runChatBench},
    };
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    auto it = commands.find(argv[1]);
    if (it == commands.end()) {
        std::fprintf(stderr, "cairn-cli: unknown command '%s'\n", argv[1]);
        usage();
        return 2;
    }
    try {
        Args args(std::vector<std::string>(argv + 2, argv + argc));
        return it->second(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cairn-cli %s: %s\n", argv[1], e.what());
        return 1;
    }
}
