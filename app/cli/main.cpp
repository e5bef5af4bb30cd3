// cairn-cli: inspect, tokenize, generate, dump, bench, synth, template, chat-bench, serve, chat, download, search-hub.
#include "command.h"
#include "terminal_text.h"

#include "cairn/error.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <map>

namespace {

void usage() {
    std::fprintf(
        stderr,
        "usage: cairn-cli COMMAND [options]\n"
        "commands:\n"
        "  inspect MODEL.gguf [--tensors] [--json] [--ctx N]   describe a model file\n"
        "  template (-m MODEL.gguf | --template FILE) --messages M.json [--add-generation-prompt] [--bos S] [--eos S]\n"
        "                                                   render a conversation with a chat template\n"
        "  template -m MODEL.gguf --messages M.json [--add-generation-prompt] --ids\n"
        "                                                   the token ids a chat session feeds for it\n"
        "  tokenize -m MODEL.gguf [--bos] [--special] [--json] TEXT   token ids and pieces\n"
        "  bench-kernels [--types Q4_0,F16] [--rows R] [--cols C] [-p TOKENS] [-t N] [-r N] [--path P]\n"
        "                                                   matmul GFLOP/s (prefill) and GB/s (decode)\n"
        "  dump -m MODEL --cases CASES.json -o OUT.json [-t N] [--chunk C] [--kv f16|f32]\n"
        "                                                   logits and greedy ids in the reference schema\n"
        "  generate -m MODEL -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P] [--seed S]\n"
        "           [--repeat-penalty R] [--frequency-penalty F] [--presence-penalty P] [-t N] [--chunk C]\n"
        "           [--ctx N] [--kv f16|f32]                stream a continuation of TEXT\n"
        "  bench -m MODEL [-p 512] [-n 128] [-d DEPTH] [-t 2] [-r 3] [--chunk C] [--json] [--sweep-chunks 16,64,...]\n"
        "        [--read-loop MIB]                           prompt and generation tokens/s, peak RSS, decode GB/s\n"
        "                                                   (beside a plain read of MIB MiB: the memory's speed)\n"
        "  bench --read-loop MIB [-t 2] [-r 3] [--json]       the memory's speed alone (best and median pass)\n"
        "  chat-bench -m MODEL [--turns 10] [--reply 128] [--temp T] [--seed S] [-t 2] [--ctx 4096] [--chunk C] "
        "[--json]\n"
        "                                                   time to first token in a growing chat: reuse, restart, "
        "regenerate\n"
        "  synth --preset NAME --type F16|Q8_0|Q4_0|Q4_K -o FILE.gguf [--vocab-dir DIR] [--seed S]\n"
        "                                                   random-weight model with a real geometry\n"
        "  serve -m MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--alias NAME] [--ctx N] [-t N]\n"
        "        [--slots N] [--queue-wait MS]               OpenAI-compatible API server (docs/API.md)\n"
        "  chat (-m MODEL | --remote URL [--api-key KEY] [--remote-model NAME]) --messages M.json [-n N]\n"
        "       [--temp T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [-t N] [--ctx N] [--timeout S] [--json]\n"
        "                                                   one assistant turn, local or on a remote server\n"
        "  download [--hub URL] REPO FILE [--dir DIR]        fetch a GGUF file (or its split set) from Hugging Face,\n"
        "                                                   resumable, checked against its SHA-256 (HF_TOKEN: access "
        "token)\n"
        "  search-hub [--hub URL] [--sort downloads|likes|updated] [--limit N] QUERY [--json]\n"
        "                                                   repositories with GGUF files and their files\n"
        "bench, generate and serve take --calibrate (kernel paths measured on this machine, cached in\n"
        "cairn's data folder) or --kernel-cache FILE (the same with that cache file)\n");
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cairn::cli;
    const std::map<std::string, int (*)(Args&)> commands = {
        {"inspect", runInspect},
        {"template", runTemplate},
        {"tokenize", runTokenize},
        {"bench-kernels", runBenchKernels},
        {"dump", runDump},
        {"generate", runGenerate},
        {"bench", runBench},
        {"synth", runSynth},
        {"chat-bench", runChatBench},
        {"serve", runServe},
        {"chat", runChat},
        {"download", runDownload},
        {"search-hub", runSearchHub},
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
        // Messages may quote strings of the input file: never raw to the terminal.
        // Errors a command raises itself may already name it ("cairn-cli bench: ...").
        const std::string what = terminalSafe(e.what()), command = std::string("cairn-cli ") + argv[1] + ":";
        if (what.starts_with(command)) std::fprintf(stderr, "%s\n", what.c_str());
        else std::fprintf(stderr, "%s %s\n", command.c_str(), what.c_str());
        return 1;
    }
}
