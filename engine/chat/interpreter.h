// Evaluates a parsed template against variables, producing the rendered text.
#pragma once

#include "ast.h"

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

namespace cairn::chat {

struct Scope {
    std::unordered_map<std::string, Value> vars;
    std::shared_ptr<Scope> parent;
};

struct RenderEnvironment {
    std::unordered_map<std::string, Value> variables;  // messages, bos_token, ... (override the globals)
    std::function<std::tm()> clock;                    // for strftime_now()
};

// Throws cairn::TemplateError("chat template, line N", message) on run-time errors.
std::string renderProgram(const Program& program, const RenderEnvironment& environment);

} // namespace cairn::chat
