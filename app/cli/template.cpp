// cairn-cli template (-m MODEL.gguf | --template FILE) --messages MESSAGES.json
//                    [--add-generation-prompt] [--bos S] [--eos S]
// cairn-cli template -m MODEL.gguf --messages MESSAGES.json [--add-generation-prompt] --ids
// Writes the rendering to stdout byte for byte; with --ids, {"ids": [...]}: the
// token ids a chat session feeds for the conversation (ChatSession::promptTokens
// on a fresh session, so the model's template or the ChatML fallback, and
// message text never parsed for control tokens). An error goes to stderr with
// exit status 1.
#include "command.h"

#include "cairn/chat_session.h"
#include "cairn/chat_template.h"
#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/model.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace cairn::cli {
namespace {

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, "cannot open file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The text of token `key` (an id) in the vocabulary, or "" when absent.
std::string tokenText(const gguf::File& file, const char* key) {
    const auto* id = file.find(key);
    const auto* tokens = file.find("tokenizer.ggml.tokens");
    if (!id || !id->isInteger() || !tokens || !tokens->isArray()) return {};
    int64_t i = id->asInt();
    if (i < 0 || uint64_t(i) >= tokens->size()) return {};
    return std::string(tokens->strings()[size_t(i)]);
}

}  // namespace

int runTemplate(Args& args) {
    auto model = args.option("-m", "--model");
    auto templateFile = args.option("--template");
    std::string messagesPath = args.require("--messages");
    bool addGenerationPrompt = args.flag("--add-generation-prompt");
    auto bos = args.option("--bos");
    auto eos = args.option("--eos");
    bool ids = args.flag("--ids");
    if (!args.positionals().empty()) throw Error("cairn-cli template", "unexpected argument " + args.positionals()[0]);
    if (bool(model) == bool(templateFile))
        throw Error("cairn-cli template", "give exactly one of -m MODEL.gguf or --template FILE");
    if (ids && (!model || bos || eos))
        throw Error("cairn-cli template",
                    "--ids needs -m MODEL.gguf (its tokenizer and tokens), without --bos / --eos");

    nlohmann::ordered_json messages;
    try {
        messages = nlohmann::ordered_json::parse(readText(messagesPath));
    } catch (const nlohmann::json::exception& e) {
        throw Error(messagesPath, std::string("invalid JSON: ") + e.what());
    }
    if (ids) {
        auto loaded = Model::load(*model);
        SessionOptions so;
        so.memory.contextSize = 1;  // nothing is fed: no KV cache worth allocating
        ChatSession chat(*loaded, so);
        const auto tokens = chat.promptTokens(chatMessagesFromJson(messages), addGenerationPrompt);
        std::printf("%s\n", nlohmann::json{{"ids", tokens}}.dump().c_str());
        return std::fflush(stdout) == 0 ? 0 : 1;
    }

    ChatRenderOptions options;
    options.addGenerationPrompt = addGenerationPrompt;
    std::string source;
    if (model) {
        auto file = gguf::File::open(*model);
        const auto* t = file.find("tokenizer.chat_template");
        if (!t) throw Error(*model, "the model has no tokenizer.chat_template");
        source = std::string(t->asString());
        options.bosToken = tokenText(file, "tokenizer.ggml.bos_token_id");
        options.eosToken = tokenText(file, "tokenizer.ggml.eos_token_id");
    } else {
        source = readText(*templateFile);
    }
    if (bos) options.bosToken = *bos;
    if (eos) options.eosToken = *eos;
    std::string out = ChatTemplate(source).render(messages, options);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace cairn::cli
