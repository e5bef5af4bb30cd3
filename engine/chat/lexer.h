// Splits template source into text and tag tokens, applying Jinja's whitespace
// control as Hugging Face configures it: trim_blocks, lstrip_blocks, `-`/`+`
// markers, comments dropped, {% raw %} kept verbatim, keep_trailing_newline=False.
#pragma once

#include <string>
#include <vector>

namespace cairn::chat {

struct Token {
    enum class Type {
        Text,
        VariableBegin,
        VariableEnd,
        BlockBegin,
        BlockEnd,
        Name,
        String,
        Integer,
        Float,
        Operator,
        End
    };
    Type type;
    std::string text;  // text, name, decoded string literal, number spelling, operator
    int line = 1;
    int column = 1;
};

// Throws cairn::Error("chat template", "line L, column C: ...") on malformed input.
std::vector<Token> tokenize(const std::string& source);

}  // namespace cairn::chat
