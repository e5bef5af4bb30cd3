#include "sse_parser.h"

#include "assistant_backend.h"

namespace cairn::backend {

std::vector<std::string> SseParser::feed(std::string_view bytes) {
    std::vector<std::string> out;
    while (!bytes.empty()) {
        const size_t nl = bytes.find('\n');
        const std::string_view part = bytes.substr(0, nl);
        if (line_.size() + data_.size() + part.size() > max_)
            throw BackendError(FailureKind::BadReply, "remote stream",
                               "an event is longer than " + std::to_string(max_ >> 20) + " MiB");
        line_.append(part);
        if (nl == std::string_view::npos) break;
        endLine(out);
        bytes.remove_prefix(nl + 1);
    }
    return out;
}

void SseParser::endLine(std::vector<std::string>& out) {
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.empty()) {  // a blank line ends the event
        if (hasData_) out.push_back(std::move(data_));
        data_.clear();
        hasData_ = false;
        return;
    }
    std::string_view line = line_;
    if (line.starts_with("data:")) {
        line.remove_prefix(5);
        if (line.starts_with(' ')) line.remove_prefix(1);
        if (hasData_) data_ += '\n';
        data_.append(line);
        hasData_ = true;
    }
    line_.clear();
}

}  // namespace cairn::backend
