// Strings from a model file shown on a terminal: a name or tokenizer label may
// hold escape sequences (ESC [ ... that move the cursor, retitle the window or
// hide text), other control characters, invalid UTF-8 or bidirectional
// overrides. They are written visibly instead.
#pragma once

#include <string>
#include <string_view>

namespace cairn::cli {

// `text` with printable UTF-8 kept; C0 and C1 controls, DEL, bidirectional
// embeddings / overrides / isolates and invalid bytes written as \xHH or \u{HHHH};
// a backslash as \\ (so the escapes are unambiguous).
std::string terminalSafe(std::string_view text);

}  // namespace cairn::cli
