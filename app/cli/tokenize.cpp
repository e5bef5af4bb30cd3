// cairn-cli tokenize -m MODEL.gguf [--bos] [--special] [--json] TEXT
#include "command.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace cairn::cli {
namespace {

// Length of the well-formed UTF-8 character at `i`, or 0.
size_t utf8CharLength(const std::string& s, size_t i) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    return n;
}

// Token bytes made printable on one line: \n \r \t \\ escaped, other control
// bytes and bytes that are not (complete) UTF-8 as \xNN.
std::string readable(const std::string& bytes) {
    std::string out;
    for (size_t i = 0; i < bytes.size();) {
        unsigned char c = static_cast<unsigned char>(bytes[i]);
        size_t n = utf8CharLength(bytes, i);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c == '\\') out += "\\\\";
        else if (n == 0 || c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
            n = 1;
        } else {
            out.append(bytes, i, n);
            i += n;
            continue;
        }
        i += 1;
    }
    return out;
}

}  // namespace

int runTokenize(Args& args) {
    const bool json = args.flag("--json");
    const bool bos = args.flag("--bos");  // add BOS/EOS as the vocabulary's flags say
    const bool special = args.flag("--special");  // control-token text becomes control tokens
    const std::string model = args.require("-m", "--model");
    auto pos = args.positionals();
    if (pos.size() != 1) throw Error("cairn-cli tokenize", "expected one TEXT argument (quote it)");

    auto file = gguf::File::open(model);
    auto tok = Tokenizer::fromGguf(file);
    auto ids = tok->encode(pos[0], bos, special);

    // Control tokens have no bytes: show their vocabulary text instead.
    auto piece = [&](int32_t id) {
        std::string bytes = tok->tokenBytes(id);
        return bytes.empty() ? std::string(tok->tokenText(id)) : bytes;
    };
    if (json) {
        nlohmann::json j;
        j["ids"] = ids;
        auto pieces = nlohmann::json::array();
        for (int32_t id : ids) pieces.push_back(piece(id));
        j["pieces"] = pieces;
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    for (int32_t id : ids) std::printf("%d\t%s\n", id, readable(piece(id)).c_str());
    return 0;
}

}  // namespace cairn::cli
