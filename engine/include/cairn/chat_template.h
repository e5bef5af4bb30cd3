// Chat templates: renders a conversation with a model's `tokenizer.chat_template`
// (Jinja, interpreted by our own engine with Hugging Face's settings), and a
// ChatML fallback for templates we cannot render.
#pragma once

#include "cairn/error.h"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cairn {

// A template that raised (raise_exception) or failed while rendering.
class TemplateError : public Error {
public:
    using Error::Error;
};

// A render stopped through ChatRenderOptions::cancel (not the template's fault: no fallback).
class TemplateCancelled : public TemplateError {
public:
    using TemplateError::TemplateError;
};

// The evaluation budget of one render. A template that exceeds a limit fails with a
// TemplateError naming it ("chat template: exceeded the step budget (N steps)"). The
// defaults and the margins measured on the real templates are in engine/chat/budget.h.
struct ChatRenderLimits {
    uint64_t maxSteps;  // nodes evaluated, loop iterations and builtin work (~64 bytes or 8 comparisons a step)
    uint64_t maxBytes;  // bytes alive at once in the template's values and its output
    uint32_t maxDepth;  // evaluation recursion and value nesting
    ChatRenderLimits();  // the defaults
};

// What a render used (filled in also when it fails).
struct ChatRenderStats {
    uint64_t steps = 0;
    uint64_t peakBytes = 0;
    uint32_t peakDepth = 0;
};

struct ChatMessage {
    std::string role;
    std::string content;
};

struct ChatRenderOptions {
    bool addGenerationPrompt = false;
    std::string bosToken;
    std::string eosToken;
    // More variables for the template (e.g. {"enable_thinking": false}); a JSON object.
    // `tools` and `documents` are passed as none unless set here, as Hugging Face does.
    std::shared_ptr<const nlohmann::ordered_json> extraVariables;
    // What strftime_now() sees; unset means the current local time.
    std::function<std::tm()> clock;
    ChatRenderLimits limits;
    // Checked with the step count; when it becomes true the render throws TemplateCancelled.
    const std::atomic<bool>* cancel = nullptr;
    // When set, receives what the render used.
    ChatRenderStats* stats = nullptr;
};

class ChatTemplate {
public:
    // Parses `source`; throws cairn::Error("chat template", "line L, column C: ...") on a syntax error.
    explicit ChatTemplate(const std::string& source);
    ChatTemplate(ChatTemplate&&) noexcept;
    ChatTemplate& operator=(ChatTemplate&&) noexcept;
    ~ChatTemplate();

    // `messages` is a JSON array of message objects ({"role", "content", ...}); ordered_json
    // keeps each object's key order, which `tojson` shows.
    // Throws cairn::TemplateError when the template raises or fails at run time.
    std::string render(const nlohmann::ordered_json& messages, const ChatRenderOptions& options = {}) const;
    std::string render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options = {}) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ChatML (`<|im_start|>role\ncontent<|im_end|>\n`), with `<|im_start|>assistant\n` as generation prompt.
std::string renderChatML(const std::vector<ChatMessage>& messages, bool addGenerationPrompt);

struct ChatRendering {
    std::string text;
    bool usedFallback = false;
    std::string fallbackReason;  // why the model's template was not used (for the user)
};

// Renders with `templateSource` (the model's template, may be empty) and falls back to
// ChatML when it is missing, does not parse, fails to render or exceeds its budget.
// A cancelled render (TemplateCancelled) is rethrown, not replaced by ChatML.
ChatRendering renderChat(const std::string& templateSource, const std::vector<ChatMessage>& messages,
                         const ChatRenderOptions& options = {});

std::vector<ChatMessage> chatMessagesFromJson(const nlohmann::ordered_json& messages);  // throws cairn::Error

}  // namespace cairn
