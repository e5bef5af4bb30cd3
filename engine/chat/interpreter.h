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
    std::unordered_map<std::string, Value> vars;  // change through set()
    std::shared_ptr<Scope> parent;
    Charge charge;

    Scope() { charge.add(2 * kObjectBytes); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope();  // sweeps the variables (a closure can keep a chain of scopes alive)
    void set(const std::string& name, Value v);
};

struct RenderEnvironment {
    std::unordered_map<std::string, Value> variables;  // messages, bos_token, ... (override the globals)
    std::function<std::tm()> clock;  // for strftime_now()
    ChatRenderLimits limits;
    const std::atomic<bool>* cancel = nullptr;
    ChatRenderStats* stats = nullptr;  // filled in when the render ends, also on failure
};

// Throws cairn::TemplateError("chat template, line N", message) on run-time errors, and
// TemplateCancelled when `environment.cancel` is set while rendering.
std::string renderProgram(const Program& program, const RenderEnvironment& environment);

}  // namespace cairn::chat
