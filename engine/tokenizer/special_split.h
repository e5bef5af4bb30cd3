// Splits text into plain-text fragments and special tokens before tokenizing
// (llama.cpp's tokenizer_st_partition).
#pragma once

#include "vocabulary.h"

#include <string_view>
#include <vector>

namespace cairn::tokenizer {

struct Fragment {
    int32_t token = -1;      // a special token, or -1 for text
    std::string_view text;   // the text when token == -1
};

// Every special token (longest first) is cut out of every remaining text
// fragment. Control and unknown tokens only when `parseSpecial`; user-defined
// tokens always. Tokens marked lstrip/rstrip swallow adjacent whitespace.
std::vector<Fragment> splitSpecial(const Vocabulary& vocab, std::string_view text, bool parseSpecial);

} // namespace cairn::tokenizer
