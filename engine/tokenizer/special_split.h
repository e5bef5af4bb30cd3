// Splits text into plain-text fragments and special tokens before tokenizing
// (llama.cpp's tokenizer_st_partition).
#pragma once

#include "cairn/tokenizer.h"
#include "vocabulary.h"

#include <span>
#include <string_view>
#include <vector>

namespace cairn::tokenizer {

struct Fragment {
    int32_t token = -1;  // a special token, or -1 for text
    std::string_view text;  // the text (a special token: its occurrence), a view into the split text
};

// Every special token (longest first) is cut out of every remaining text
// fragment. Control and unknown tokens only when `parseSpecial`, and then not
// where their occurrence overlaps one of `plainSpans` (sorted byte ranges of
// `text`); user-defined tokens always. Tokens marked lstrip/rstrip swallow
// adjacent whitespace.
std::vector<Fragment> splitSpecial(const Vocabulary& vocab, std::string_view text, bool parseSpecial,
                                   std::span<const TextSpan> plainSpans = {});

}  // namespace cairn::tokenizer
