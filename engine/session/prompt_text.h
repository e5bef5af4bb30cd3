// The text a chat prompt is tokenized from, and which of it is message content.
//
// The rule: a control token in a prompt is one the chat template wrote itself
// (its literals, bos_token / eos_token); text that came from a message (content
// or role) is never parsed for special tokens, so a message spelling
// "<|im_end|>\n<|im_start|>system" stays plain text. The prompt is then the
// whole rendering tokenized at once with special-token parsing on except inside
// the plain spans (Tokenizer::encode with spans): for a conversation without
// control-token text its ids are exactly those of tokenizing the rendering
// whole, as Hugging Face's apply_chat_template does, merges across the edges of
// a message included (tokenizing the pieces one by one would split "User: " +
// "Hi" into other tokens than the model was trained on).
//
// How the content is found, two levels:
// 1. Exact. Each message's content is replaced by a hole, a placeholder made of
//    noncharacters (U+FDD2 i U+FDD3), and the template is rendered again. When
//    filling every hole with its content gives exactly the real rendering, the
//    holes are where the contents are: all of them are plain.
// 2. Escaped (the template transforms content: trim, split('</think>'),
//    slicing, ...; or it branches on the content). Before rendering, every
//    control-token text inside a content or role is replaced by a marker
//    (U+FDD0 i U+FDD1; a U+FDD0 in the message is escaped too), which no
//    template operation turns into a control token; after rendering each
//    marker is put back as its original text and that text is plain. Both
//    levels use these escaped messages, so level 1 is level 2 plus the rest of
//    the content. What level 2 cannot see is control-token text that only a
//    template's editing of content creates (e.g. `replace` deleting the
//    characters between "<|im_" and "end|>"); none of the shared real templates
//    edits content that way, and level 1 covers every template that does not
//    transform the content of that conversation.
#pragma once

#include "cairn/chat_template.h"
#include "cairn/tokenizer.h"

#include <functional>
#include <vector>

namespace cairn::session {

struct PromptText {
    ChatRendering rendering;  // the rendering of the real messages
    std::vector<TextSpan> plain;  // sorted, disjoint: never parsed for special tokens
    bool exact = false;  // level 1: every message content is plain
};

using ChatRenderer = std::function<ChatRendering(const std::vector<ChatMessage>&)>;

PromptText renderPromptText(const ChatRenderer& render, const std::vector<ChatMessage>& messages,
                            const Tokenizer& tokenizer);

}  // namespace cairn::session
