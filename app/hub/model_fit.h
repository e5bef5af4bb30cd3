// Whether a model file would fit this machine (weights + one session's K/V
// against the memory available now) and whether the engine can run its
// architecture, before it is downloaded.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>

namespace cairn::hub {

enum class Fit { Unknown, Fits, Tight, WontFit };

// Fits: needs at most 70 % of what is available; Tight: at most all of it.
Fit estimateFit(uint64_t neededBytes, uint64_t availableBytes);
QString fitLabel(Fit fit);  // "fits", "tight", "won't fit", ""

// MemAvailable of /proc/meminfo (0 when unknown).
uint64_t availableMemoryBytes();

// The architectures the engine loads (engine/model/model.cpp's registry;
// test_hub_listing checks this list against the engine's own refusal message).
const QStringList& supportedArchitectures();
bool isSupportedArchitecture(const QString& architecture);

// Small models Cairn runs, shown before any search: repository and a note.
struct Recommended {
    QString repo;
    QString note;
};
const std::vector<Recommended>& recommendedModels();

}  // namespace cairn::hub
