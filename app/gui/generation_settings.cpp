#include "generation_settings.h"

#include <cmath>
#include <type_traits>

namespace cairn::app {

namespace {

// Calls fn(field) with the member of `s` that `limit` names; false for a
// limit that is not a member (none: every table row is one).
template <class Settings, class Fn>
bool withField(Settings& s, const GenerationLimit& limit, Fn&& fn) {
    if (&limit == &limits::threads) fn(s.threads);
    else if (&limit == &limits::contextSize) fn(s.contextSize);
    else if (&limit == &limits::prefillChunk) fn(s.prefillChunk);
    else if (&limit == &limits::temperature) fn(s.temperature);
    else if (&limit == &limits::topK) fn(s.topK);
    else if (&limit == &limits::topP) fn(s.topP);
    else if (&limit == &limits::minP) fn(s.minP);
    else if (&limit == &limits::repeatPenalty) fn(s.repeatPenalty);
    else if (&limit == &limits::seed) fn(s.seed);
    else if (&limit == &limits::maxTokens) fn(s.maxTokens);
    else if (&limit == &limits::snapshotBudgetMiB) fn(s.snapshotBudgetMiB);
    else return false;
    return true;
}

}  // namespace

double GenerationSettings::value(const GenerationLimit& limit) const {
    double v = limit.defaultValue;
    withField(*this, limit, [&](const auto& field) {
        // A float as the user typed it (0.7f is 0.699999988 as a double).
        if constexpr (std::is_same_v<std::decay_t<decltype(field)>, float>) v = limits::decimal(field);
        else v = double(field);
    });
    return v;
}

void GenerationSettings::set(const GenerationLimit& limit, double v) {
    const double clamped = limit.clamp(std::isfinite(v) ? v : limit.defaultValue);
    withField(*this, limit, [&](auto& field) { field = std::remove_reference_t<decltype(field)>(clamped); });
}

void GenerationSettings::apply(const GenerationOverrides& overrides) {
    for (const auto& [limit, v] : overrides) set(*limit, v);
}

}  // namespace cairn::app
