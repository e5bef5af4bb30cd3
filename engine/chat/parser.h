// Parses the token stream into a Program. Throws cairn::Error("chat template", "line L, column C: ...").
#pragma once

#include "ast.h"
#include "lexer.h"

namespace cairn::chat {

Program parse(const std::vector<Token>& tokens);

}  // namespace cairn::chat
