// Tiny transformer and Mamba models for the session tests, written once per test run.
#pragma once

#include "tiny_mamba.h"
#include "tiny_models.h"

#include "cairn/model.h"

#include <QTemporaryDir>

#include <memory>
#include <vector>

namespace cairn::test {

struct SessionModels {
    QTemporaryDir dir;
    std::unique_ptr<Model> llama;
    std::unique_ptr<Model> mamba;

    SessionModels() {
        TinyModelOptions t;
        t.type = TensorType::Q8_0;
        llama = Model::load(writeTinyModel((dir.path() + "/llama.gguf").toStdString(), t));
        TinyMambaOptions m;
        m.type = TensorType::F16;
        mamba = Model::load(writeTinyMamba((dir.path() + "/mamba.gguf").toStdString(), m));
    }
    std::vector<const Model*> all() const { return {llama.get(), mamba.get()}; }
};

// Deterministic token ids below the tiny vocabulary's control tokens.
inline std::vector<int32_t> someTokens(int n, int seed) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    uint32_t s = uint32_t(seed) * 2654435761u + 1;
    for (auto& x : t) {
        s = s * 1664525u + 1013904223u;
        x = int32_t((s >> 8) % 256);
    }
    return t;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace cairn::test
