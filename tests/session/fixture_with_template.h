// A copy of a shared fixture model with another chat template (the fixtures'
// own are missing or a base model's), for tests of what a chat session feeds.
#pragma once

#include "cairn/gguf.h"

#include <string>
#include <vector>

namespace cairn::test {

inline void writeFixtureWithTemplate(const std::string& fixture, const std::string& chatTemplate,
                                     const std::string& out) {
    auto f = gguf::File::open(fixture);
    gguf::Writer w(f.alignment());
    for (const auto& v : f.metadata()) w.copyValue(v);
    w.setString("tokenizer.chat_template", chatTemplate);
    for (const auto& t : f.tensors()) {
        std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.nDims);
        w.addTensor(std::string(t.name), t.type, ne, std::span<const uint8_t>(t.data, t.nbytes));
    }
    w.write(out);
}

} // namespace cairn::test
