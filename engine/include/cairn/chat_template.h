// Chat templates: renders a conversation with a model's `tokenizer.chat_template`
// (Jinja, interpreted by our own engine with Hugging Face's settings), and a
// ChatML fallback for templates we cannot render.
#pragma once

#include "cairn/error.h"

#include <nlohmann/json_fwd.hpp>

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
// ChatML when it is missing, does not parse or fails to render.
ChatRendering renderChat(const std::string& templateSource, const std::vector<ChatMessage>& messages,
                         const ChatRenderOptions& options = {});

std::vector<ChatMessage> chatMessagesFromJson(const nlohmann::ordered_json& messages);  // throws cairn::Error

} // namespace cairn
