// Stop sequences over streamed text: pieces go in, the text that can be
// shown comes out. Text that could be the start of a stop sequence is held
// back until it is clearly not one, so a stop split across pieces is still
// found and nothing of it is ever sent. Pieces are whole UTF-8 characters and
// the stop strings valid UTF-8, so what is held back starts on a character
// boundary and the output never splits a character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::server {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

    // Adds generated text; returns what may be sent now. After a stop is
    // found it returns the text before it, and nothing more afterwards.
    std::string push(std::string_view piece);
    // Generation ended without a stop: the text still held back.
    std::string finish();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string pending_;
    bool stopped_ = false;
};

}  // namespace cairn::server
