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
        all[QLatin1String(l->key)] = QVariantMap{{QStringLiteral("min"), l->min}, {QStringLiteral("max"), l->max},
                                                {QStringLiteral("defaultValue"), l->defaultValue},
                                                {QStringLiteral("integer"), l->integer}};
    return all;
}

QVariantMap AppSettings::generationSettings(const QVariantMap& overrides) const {
    QVariantMap m;
    int t = threads();
    m[QStringLiteral("threads")] = t > 0 ? t : std::max(1, QThread::idealThreadCount());
    m[QStringLiteral("contextSize")] = contextSize();
    m[QStringLiteral("prefillChunk")] = prefillChunk();
    m[QStringLiteral("temperature")] = temperature();
    m[QStringLiteral("topK")] = topK();
    m[QStringLiteral("topP")] = topP();
    m[QStringLiteral("minP")] = minP();
    m[QStringLiteral("repeatPenalty")] = repeatPenalty();
    m[QStringLiteral("seed")] = seed();
    m[QStringLiteral("maxTokens")] = maxTokens();
    m[QStringLiteral("systemPrompt")] = systemPrompt();
    m[QStringLiteral("dropOldestTurns")] = dropOldestTurns();
    m[QStringLiteral("snapshotBudgetMiB")] = snapshotBudgetMiB();
    for (auto it = overrides.begin(); it != overrides.end(); ++it)
        if (m.contains(it.key()) && it.value().isValid()) m[it.key()] = it.value();
    return m;
}

} // namespace cairn::app
