// A copy of a shared fixture model with a chat template in its metadata
// (the fixtures carry none): for tests that chat through a model's own template.
#pragma once

#include <string>

namespace cairn::test {

// Writes `out`: every metadata value and tensor of `model`, with
// tokenizer.chat_template set to the text of `templateFile`. Returns `out`;
// throws when a file cannot be read or written.
std::string writeWithChatTemplate(const std::string& model, const std::string& templateFile, const std::string& out);

} // namespace cairn::test
