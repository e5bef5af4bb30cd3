// The public chat-template API over the Jinja interpreter, and the ChatML fallback.
//
// How engine/chat renders a template (jinja2 3.1 as Hugging Face configures it):
//   lexer.cpp        source -> tokens (whitespace control: trim_blocks, lstrip_blocks, -/+)
//   parser.cpp       tokens -> AST (ast.h). One nesting limit (200) covers every construct:
//                    blocks, parentheses, and chains parsed in a loop (a + b + ..., a.b.c,
//                    a|f|g, x if c else y if ...) count one level per link, so neither the
//                    parser, the evaluator nor the tree's destructor recurses deeper.
//   interpreter.cpp  AST -> text: statements, scopes (Scope), macros, loops, globals
//                    (range, dict, namespace, joiner, cycler, raise_exception, strftime_now).
//   value.h/.cpp     values: shared immutable strings, lists, dicts, namespaces, functions;
//                    repr (with cycle detection: <Namespace {...}>), ==, <, tojson.
//   operators.cpp    Python operators, attribute/item access, slicing, iteration.
//   builtins.h       what the interpreter calls: operators, filters, `is` tests, methods,
//                    all three kinds found by name in a BuiltinTable (aliases resolved first).
//   filters.cpp, jinja_is_tests.cpp, methods.cpp   the builtins, each with jinja2 3.1's
//                    handling of none/undefined/false-y inputs and argument defaults.
//   unicode.h/.cpp   Python str semantics over the engine's one UTF-8 codec (cairn/utf8.h).
//   budget.h/.cpp    one evaluation budget per render (ChatRenderLimits): steps (nodes
//                    evaluated, loop iterations, builtin work), bytes alive (every string,
//                    list, dict, namespace, function, scope and output buffer charges its
//                    bytes while it lives; multiplying builtins check before allocating),
//                    recursion depth and stack (evaluation, repr, ==, <, tojson), and the
//                    caller's cancel flag, read with the step count. Destruction of values
//                    is iterative (sweep() in value.cpp), so a value nested a million deep
//                    cannot overflow the stack when it dies.
//
// Where each Jinja feature lives:
//   {{ }}, {% %}, {# #}, raw, whitespace control         lexer.cpp
//   if / for (else, loop.*, break / continue, `for x in y if c`) / set (tuple targets,
//   namespace attributes, block set) / macro and call blocks (caller) / filter blocks
//                                                        parser.cpp (syntax), interpreter.cpp
//   expressions: literals, ~ and Python operators, comparisons and `in`, `x if c else y`,
//   a.b and a[b], slices, calls with keywords            parser.cpp, operators.cpp
//   `x|f(...)`: abs ... wordcount, tojson (Hugging Face's)   filters.cpp
//   `x is t(...)`: defined, string, divisibleby, eq / == ...  jinja_is_tests.cpp
//   'str'.strip() ..., dict.items() ..., list.index() ...; the sandbox's refusals  methods.cpp
//   range, dict, namespace, joiner, cycler, raise_exception, strftime_now
//                                                        interpreter.cpp (installGlobals),
//                                                        time_format.cpp (strftime)
//   Undefined (jinja2's lenient default), repr and str of every value   value.h/.cpp
#include "cairn/chat_template.h"

#include "interpreter.h"
#include "lexer.h"
#include "parser.h"

#include <nlohmann/json.hpp>

namespace cairn {

struct ChatTemplate::Impl {
    chat::Program program;
};

ChatTemplate::ChatTemplate(const std::string& source) : impl_(std::make_unique<Impl>()) {
    impl_->program = chat::parse(chat::tokenize(source));
}

ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const ChatRenderOptions& options) const {
    if (!messages.is_array()) throw Error("chat template", "messages must be a JSON array");
    chat::RenderEnvironment env;
    env.clock = options.clock;
    env.limits = options.limits;
    env.cancel = options.cancel;
    env.stats = options.stats;
    auto& vars = env.variables;
    vars["messages"] = chat::Value::fromJson(messages, options.limits.maxDepth);
    vars["tools"] = chat::Value::none();
    vars["documents"] = chat::Value::none();
    vars["add_generation_prompt"] = chat::Value(options.addGenerationPrompt);
    vars["bos_token"] = chat::Value(options.bosToken);
    vars["eos_token"] = chat::Value(options.eosToken);
    if (options.extraVariables) {
        if (!options.extraVariables->is_object()) throw Error("chat template", "extra variables must be a JSON object");
        for (const auto& [k, v] : options.extraVariables->items())
            vars[k] = chat::Value::fromJson(v, options.limits.maxDepth);
    }
    try {
        return chat::renderProgram(impl_->program, env);
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw TemplateError("chat template", "out of memory while rendering");
    } catch (const std::exception& e) {
        // A wrong argument type deep in a builtin: still the template's failure, never a crash.
        throw TemplateError("chat template", e.what());
    }
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options) const {
    auto j = nlohmann::ordered_json::array();
    for (const auto& m : messages) j.push_back({{"role", m.role}, {"content", m.content}});
    return render(j, options);
}

std::string renderChatML(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) {
    std::string out;
    for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    if (addGenerationPrompt) out += "<|im_start|>assistant\n";
    return out;
}

ChatRendering renderChat(const std::string& templateSource, const std::vector<ChatMessage>& messages,
                         const ChatRenderOptions& options) {
    ChatRendering r;
    if (templateSource.empty()) {
        r.fallbackReason = "the model has no chat template";
    } else {
        try {
            r.text = ChatTemplate(templateSource).render(messages, options);
            return r;
        } catch (const TemplateCancelled&) {
            throw;
        } catch (const Error& e) {
            r.fallbackReason = std::string("the model's chat template failed (") + e.what() + ")";
        }
    }
    r.usedFallback = true;
    r.fallbackReason += "; using ChatML instead";
    r.text = renderChatML(messages, options.addGenerationPrompt);
    return r;
}

std::vector<ChatMessage> chatMessagesFromJson(const nlohmann::ordered_json& messages) {
    if (!messages.is_array()) throw Error("messages", "expected a JSON array of {\"role\", \"content\"} objects");
    std::vector<ChatMessage> out;
    for (size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            throw Error("messages", "message " + std::to_string(i) + " has no string \"role\"");
        ChatMessage cm;
        cm.role = m["role"].get<std::string>();
        if (m.contains("content") && m["content"].is_string()) cm.content = m["content"].get<std::string>();
        else if (m.contains("content") && !m["content"].is_null())
            throw Error("messages", "message " + std::to_string(i) + " has non-text \"content\"");
        out.push_back(std::move(cm));
    }
    return out;
}

}  // namespace cairn
