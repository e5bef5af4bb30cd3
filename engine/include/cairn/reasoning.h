// Reasoning in replies: models such as Qwen3 and the DeepSeek-R1 distills
// write their reasoning between markers (`<think>` … `</think>`) before the
// answer, or (when the chat template's generation prompt already opened the
// block) start inside it. These functions find that part of a reply; they
// never change the reply's text, so the reasoning segment followed by the
// answer is byte for byte what the model generated (the app stores the two
// apart and joins them again for the next turn's rendering, where the model's
// own template decides what of it the prompt keeps).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cairn {

struct ReasoningMarkers {
    std::string open = "<think>";
    std::string close = "</think>";
};

// The markers a chat template uses (Seed-OSS's `<seed:think>`; `<think>` otherwise);
// also the markers of a stored reasoning segment, which names them.
ReasoningMarkers reasoningMarkersOf(std::string_view templateSource);

// Whether a rendered prompt ends inside an opened reasoning block (its end,
// trailing whitespace aside, is the opening marker): the reply starts as reasoning.
bool promptOpensReasoning(std::string_view prompt, const ReasoningMarkers& markers);

struct ReplySplit {
    // The reply's first bytes that are reasoning, its markers included (0: none).
    // The answer is the rest of the reply.
    size_t reasoningBytes = 0;
    // The closing marker ended the reasoning (false while it streams, or when the reply stopped inside it).
    bool closed = false;
    // The reply so far is whitespace or a beginning of the opening marker: it may
    // still turn out to be reasoning (a streaming view shows nothing yet).
    bool undecided = false;
};

// Reasoning is only where the reply begins (leading whitespace aside) with the
// opening marker, or everywhere up to the closing one when `startsInside`; a
// marker later in the reply is answer text. Without the closing marker the
// whole reply is reasoning.
ReplySplit splitReasoning(std::string_view reply, const ReasoningMarkers& markers, bool startsInside);

// The reasoning's text: `segment` (a ReplySplit's reasoning bytes) without its
// markers and surrounding whitespace.
std::string_view reasoningText(std::string_view segment, const ReasoningMarkers& markers);

}  // namespace cairn
