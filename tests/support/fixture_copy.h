// Copies of shared fixtures with one thing changed: for the load-refusal tests,
// and with a chat template (the fixtures carry none) for the chat tests.
#pragma once

#include "cairn/gguf.h"

#include <functional>
#include <set>
#include <string>

namespace cairn::test {

// A writer holding the fixture's metadata and tensors, less the tensors in `drop`.
gguf::Writer copyOf(const gguf::File& f, const std::set<std::string>& drop = {});

// Writes a copy of the model at `fixture` with tokenizer.chat_template = `chatTemplate` to `out`.
void writeFixtureWithTemplate(const std::string& fixture, const std::string& chatTemplate, const std::string& out);

// Writes a copy of fixtures/NAME.gguf without `drop`, changed by `edit`, to
// `path` and loads it: the cairn::Error's message, or "" when it loaded.
std::string loadErrorOfCopy(const std::string& name, const std::set<std::string>& drop,
                            const std::function<void(gguf::Writer&)>& edit, const std::string& path);

// What is wrong with refusing such a copy: "" when loading it fails with an
// error containing `needle`, else why not (it loaded, or the error says something else).
std::string refusalProblem(const std::string& name, const std::set<std::string>& drop,
                           const std::function<void(gguf::Writer&)>& edit, const std::string& path,
                           const std::string& needle);

}  // namespace cairn::test
