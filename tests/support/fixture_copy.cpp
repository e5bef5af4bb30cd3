#include "fixture_copy.h"

#include "cairn/error.h"
#include "cairn/model.h"
#include "shared_data.h"

#include <vector>

namespace cairn::test {

gguf::Writer copyOf(const gguf::File& f, const std::set<std::string>& drop) {
    gguf::Writer w(f.alignment());
    for (const auto& v : f.metadata()) w.copyValue(v);
    for (const auto& t : f.tensors()) {
        if (drop.count(std::string(t.name))) continue;
        std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.nDims);
        w.addTensor(std::string(t.name), t.type, ne, {t.data, t.nbytes});
    }
    return w;
}

void writeFixtureWithTemplate(const std::string& fixture, const std::string& chatTemplate, const std::string& out) {
    auto w = copyOf(gguf::File::open(fixture));
    w.setString("tokenizer.chat_template", chatTemplate);
    w.write(out);
}

std::string loadErrorOfCopy(const std::string& name, const std::set<std::string>& drop,
                            const std::function<void(gguf::Writer&)>& edit, const std::string& path) {
    auto f = gguf::File::open(sharedPath("fixtures/" + name + ".gguf"));
    auto w = copyOf(f, drop);
    if (edit) edit(w);
    w.write(path);
    try {
        Model::load(path);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

std::string refusalProblem(const std::string& name, const std::set<std::string>& drop,
                           const std::function<void(gguf::Writer&)>& edit, const std::string& path,
                           const std::string& needle) {
    const std::string error = loadErrorOfCopy(name, drop, edit, path);
    if (error.empty()) return name + " loaded; expected: " + needle;
    if (error.find(needle) == std::string::npos) return error;
    return {};
}

}  // namespace cairn::test
