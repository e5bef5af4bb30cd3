// Loaders of the architectures Cairn implements, one per file, listed in the
// registry of model.cpp by their `general.architecture` name.
#pragma once

#include "cairn/gguf.h"
#include "cairn/model.h"

#include <memory>

namespace cairn::model {

using ArchitectureLoader = std::unique_ptr<Model> (*)(std::unique_ptr<gguf::File> file);

std::unique_ptr<Model> loadLlama(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadQwen2(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadQwen3(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadMamba(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadMamba2(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadLfm2(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadGraniteHybrid(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadQwen35(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadGemma3(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadPhi3(std::unique_ptr<gguf::File> file);
std::unique_ptr<Model> loadSmolLm3(std::unique_ptr<gguf::File> file);

}  // namespace cairn::model
