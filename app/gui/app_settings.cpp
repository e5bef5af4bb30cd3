#include "app_settings.h"

#include <QThread>

namespace cairn::app {

AppSettings::AppSettings(const QString& fileName, QObject* parent) : QObject(parent) {
    settings_ = fileName.isEmpty() ? std::make_unique<QSettings>()
                                   : std::make_unique<QSettings>(fileName, QSettings::IniFormat);
}

QVariant AppSettings::value(const QString& key, const QVariant& def) const {
    QVariant v = settings_->value(key, def);
    return v.isValid() ? v : def;
}

void AppSettings::setValue(const QString& key, const QVariant& v) {
    if (settings_->value(key) == v) return;
    settings_->setValue(key, v);
    emit changed();
}

void AppSettings::sync() { settings_->sync(); }

void AppSettings::resetToDefaults() {
    settings_->clear();
    emit changed();
}

QVariantMap AppSettings::generationLimits() {
    QVariantMap all;
    for (const GenerationLimit* l : limits::all)
        all[QLatin1String(l->key)] = QVariantMap{{QStringLiteral("min"), l->min},
                                                 {QStringLiteral("max"), l->max},
                                                 {QStringLiteral("defaultValue"), l->defaultValue},
                                                 {QStringLiteral("integer"), l->integer}};
    return all;
}

// More threads than CPUs only make the engine's workers wait for a core while
// the others spin: on 2 cores, the kernel calibration took 5.3 s on 256
// threads (the setting's maximum) against 0.2 s on 2.
int AppSettings::engineThreads(int setting) {
    return setting > 0 ? std::min(setting, cpuCount()) : cpuCount();
}

int AppSettings::cpuCount() { return std::max(1, QThread::idealThreadCount()); }

GenerationSettings AppSettings::generationSettings(const GenerationOverrides& overrides) const {
    GenerationSettings g;
    g.set(limits::threads, engineThreads(threads()));
    g.set(limits::contextSize, contextSize());
    g.set(limits::prefillChunk, prefillChunk());
    g.set(limits::temperature, temperature());
    g.set(limits::topK, topK());
    g.set(limits::topP, topP());
    g.set(limits::minP, minP());
    g.set(limits::repeatPenalty, repeatPenalty());
    g.set(limits::seed, seed());
    g.set(limits::maxTokens, maxTokens());
    g.set(limits::snapshotBudgetMiB, snapshotBudgetMiB());
    g.systemPrompt = systemPrompt();
    g.dropOldestTurns = dropOldestTurns();
    g.apply(overrides);
    return g;
}

}  // namespace cairn::app
