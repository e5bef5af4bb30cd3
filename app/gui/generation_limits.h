// The one table of generation settings: for each, its key (as in
// AppSettings::generationSettings() and a conversation's settings JSON), its
// default and the range accepted. The Settings panel (ui/SettingsDialog.qml,
// through AppSettings::generationLimits), the settings defaults (app_settings.h), the
// worker's clamping (engine_worker.cpp) and the per-conversation validation
// (conversation_settings_model.cpp) all read it, so they cannot disagree.
// Defaults the engine has are taken from the engine; ranges are what the
// Settings panel offers.
#pragma once

#include "cairn/model.h"
#include "cairn/sampler.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace cairn::app {

struct GenerationLimit {
    const char* key;
    double defaultValue;
    double min, max;
    bool integer;

    double clamp(double v) const { return std::clamp(v, min, max); }
};

namespace limits {

inline constexpr SamplerOptions kSampler{};

// A float default as a user would type it (0.8f is 0.800000011920929 as a
// double): rounded to six decimals, which every default here fits in.
constexpr double decimal(float v) { return double(int64_t(double(v) * 1e6 + (v >= 0 ? 0.5 : -0.5))) / 1e6; }

inline constexpr GenerationLimit threads{"threads", 0, 0, 256, true};  // 0: all cores
inline constexpr GenerationLimit contextSize{"contextSize", 4096, 256, 131072, true};
inline constexpr GenerationLimit prefillChunk{"prefillChunk", double(kDefaultPrefillChunk), 1, 4096, true};
inline constexpr GenerationLimit temperature{"temperature", decimal(kSampler.temperature), 0, 10, false};
inline constexpr GenerationLimit topK{"topK", double(kSampler.topK), 0, 1000, true};
inline constexpr GenerationLimit topP{"topP", decimal(kSampler.topP), 0, 1, false};
inline constexpr GenerationLimit minP{"minP", decimal(kSampler.minP), 0, 1, false};
inline constexpr GenerationLimit repeatPenalty{"repeatPenalty", decimal(kSampler.repeatPenalty), 0.01, 10, false};
inline constexpr GenerationLimit seed{"seed", double(kSampler.seed), 0, 2147483647.0, true};  // 0: a new seed per reply
inline constexpr GenerationLimit maxTokens{"maxTokens", 512, 1, 32768, true};
inline constexpr GenerationLimit snapshotBudgetMiB{"snapshotBudgetMiB", 2048, 0, 1048576, true};

inline constexpr std::array all{&threads,       &contextSize, &prefillChunk, &temperature,      &topK, &topP, &minP,
                                &repeatPenalty, &seed,        &maxTokens,    &snapshotBudgetMiB};

}  // namespace limits
}  // namespace cairn::app
