// The requests the API server takes, parsed from JSON into typed values and
// checked (ranges, types, sizes) before any work is done: a bad field is a
// 400 naming it.
#pragma once

#include "cairn/chat_template.h"
#include "cairn/sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn::server {

struct GenerationParams {
    std::string model;  // empty: the loaded one
    SamplerOptions sampler;
    std::optional<int64_t> maxTokens;  // unset: until the end of generation or the context is full
    std::vector<std::string> stop;  // at most 4, each non-empty valid UTF-8
    bool stream = false;
    bool includeUsage = false;  // stream_options.include_usage
};

struct ChatRequest {
    GenerationParams params;
    std::vector<ChatMessage> messages;
};

struct CompletionRequest {
    GenerationParams params;
    std::string prompt;  // plain text: control-token spellings in it stay text
};

// Throw ApiError (400) on malformed JSON or a bad parameter.
ChatRequest parseChatRequest(const std::string& body);
CompletionRequest parseCompletionRequest(const std::string& body);

}  // namespace cairn::server
