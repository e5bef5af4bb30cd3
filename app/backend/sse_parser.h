// Server-Sent Events, as streamed chat completions send them: bytes in, the
// `data` of each finished event out. Lines end with "\n" or "\r\n"; several
// data lines of one event are joined with "\n"; comments (":") and other
// fields are skipped. The reply is untrusted: an event or a line longer than
// the limit is an error instead of an ever-growing buffer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::backend {

class SseParser {
public:
    explicit SseParser(size_t maxEventBytes = size_t(4) << 20) : max_(maxEventBytes) {}
    // The data of every event these bytes complete, in order. Throws
    // BackendError (BadReply) when an event outgrows the limit.
    std::vector<std::string> feed(std::string_view bytes);

private:
    void endLine(std::vector<std::string>& out);
    size_t max_;
    std::string line_;
    std::string data_;
    bool hasData_ = false;
};

}  // namespace cairn::backend
