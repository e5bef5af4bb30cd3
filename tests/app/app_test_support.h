// Helpers for the app tests: a tiny model on disk and controller settings
// that keep replies fast and reproducible.
#pragma once

#include "app_paths.h"
#include "app_settings.h"
#include "tiny_models.h"

#include <QDir>
#include <QString>

namespace cairn::test {

inline QString writeTinyAppModel(const QString& dir, int64_t layers = 2, int64_t context = 4096) {
    TinyModelOptions o;
    o.layers = layers;
    o.context = context;
    o.seed = 7;
    return QString::fromStdString(
        writeTinyModel(QDir(dir).filePath(QStringLiteral("tiny-llama.gguf")).toStdString(), o));
}

inline void fastSettings(app::AppSettings& s, const QString& model) {
    s.setThreads(1);
    s.setContextSize(4096);
    s.setPrefillChunk(64);
    s.setTemperature(0.8);
    s.setSeed(11);
    s.setMaxTokens(24);
    s.setSystemPrompt(QString());
    s.setLastModel(model);
    s.setLastConversation(-1);  // each test opens what it means to (test_app_bridge reopenOnLastConversation)
}

}  // namespace cairn::test
