#include "fixture_with_template.h"

#include "cairn/gguf.h"
#include "shared_data.h"

#include <span>
#include <vector>

namespace cairn::test {

std::string writeWithChatTemplate(const std::string& model, const std::string& templateFile, const std::string& out) {
    const gguf::File f = gguf::File::open(model);
    gguf::Writer w(f.alignment());
    for (const gguf::Value& v : f.metadata()) w.copyValue(v);
    w.setString("tokenizer.chat_template", readFile(templateFile));
    for (const gguf::TensorInfo& t : f.tensors())
        w.addTensor(std::string(t.name), t.type, std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.nDims),
                    std::span<const uint8_t>(t.data, t.nbytes));
    w.write(out);
    return out;
}

} // namespace cairn::test
