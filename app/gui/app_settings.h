// App-wide settings, persisted in QSettings (per-conversation overrides live
// in the database). One instance, owned by the controller and handed to QML.
#pragma once

#include "generation_settings.h"

#include <QObject>
#include <QSettings>
#include <QStringList>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include <memory>

namespace cairn::app {

#define CAIRN_SETTING(Type, name, Name, key, def)                                                                      \
    Q_PROPERTY(Type name READ name WRITE set##Name NOTIFY changed)                                                     \
public:                                                                                                                \
    Type name() const { return value(QStringLiteral(key), QVariant::fromValue<Type>(def)).value<Type>(); }             \
    void set##Name(const Type& v) { setValue(QStringLiteral(key), QVariant::fromValue<Type>(v)); }                     \
                                                                                                                       \
private:

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")

    CAIRN_SETTING(int, threads, Threads, "engine/threads", int(limits::threads.defaultValue))  // 0: all cores
    CAIRN_SETTING(int, contextSize, ContextSize, "engine/contextSize", int(limits::contextSize.defaultValue))
    CAIRN_SETTING(int, prefillChunk, PrefillChunk, "engine/prefillChunk", int(limits::prefillChunk.defaultValue))
    CAIRN_SETTING(double, temperature, Temperature, "sampling/temperature", limits::temperature.defaultValue)
    CAIRN_SETTING(int, topK, TopK, "sampling/topK", int(limits::topK.defaultValue))
    CAIRN_SETTING(double, topP, TopP, "sampling/topP", limits::topP.defaultValue)
    CAIRN_SETTING(double, minP, MinP, "sampling/minP", limits::minP.defaultValue)
    CAIRN_SETTING(double, repeatPenalty, RepeatPenalty, "sampling/repeatPenalty", limits::repeatPenalty.defaultValue)
    CAIRN_SETTING(int, seed, Seed, "sampling/seed", int(limits::seed.defaultValue))  // 0: a new seed per reply
    CAIRN_SETTING(int, maxTokens, MaxTokens, "sampling/maxTokens", int(limits::maxTokens.defaultValue))
    CAIRN_SETTING(QString, systemPrompt, SystemPrompt, "chat/systemPrompt",
                  QStringLiteral("You are a helpful assistant."))
    CAIRN_SETTING(bool, dropOldestTurns, DropOldestTurns, "chat/dropOldestTurns", false)
    CAIRN_SETTING(int, snapshotBudgetMiB, SnapshotBudgetMiB, "store/snapshotBudgetMiB",
                  int(limits::snapshotBudgetMiB.defaultValue))
    CAIRN_SETTING(QString, theme, Theme, "ui/theme", QStringLiteral("light"))
    CAIRN_SETTING(QStringList, modelFolders, ModelFolders, "models/folders", QStringList())
    CAIRN_SETTING(QStringList, extraModelFiles, ExtraModelFiles, "models/files", QStringList())
    CAIRN_SETTING(QString, lastModel, LastModel, "models/last", QString())
    // The conversation open when Cairn last quit: the next start opens it (-1: a new chat).
    CAIRN_SETTING(qint64, lastConversation, LastConversation, "chats/last", qint64(-1))
    // Set (and written to disk) while a model loads, cleared when it is loaded,
    // failed cleanly or the app quit: still set at start means the load killed the app.
    CAIRN_SETTING(QString, loadingModel, LoadingModel, "models/loading", QString())
    // Base URLs of remote OpenAI-compatible endpoints (their keys are in the keyring).
    CAIRN_SETTING(QStringList, remoteEndpoints, RemoteEndpoints, "remote/endpoints", QStringList())
    // The local API server (off by default; its key is in the keyring).
    CAIRN_SETTING(bool, apiServerEnabled, ApiServerEnabled, "apiServer/enabled", false)
    CAIRN_SETTING(QString, apiServerHost, ApiServerHost, "apiServer/host", QStringLiteral("127.0.0.1"))
    CAIRN_SETTING(int, apiServerPort, ApiServerPort, "apiServer/port", 8080)
    // Model downloads: the hub (Hugging Face or a mirror) and the unfinished downloads (JSON), resumed after a restart.
    CAIRN_SETTING(QString, hubUrl, HubUrl, "hub/url", QStringLiteral("https://huggingface.co"))
    CAIRN_SETTING(QString, hubDownloads, HubDownloads, "hub/downloads", QString())
    // The generation settings' ranges and defaults (generation_limits.h) for the
    // Settings panel: key -> {min, max, defaultValue, integer}.
    Q_PROPERTY(QVariantMap generationLimits READ generationLimits CONSTANT)
    // The CPUs this process may run on: the most threads the engine uses.
    Q_PROPERTY(int cpuCount READ cpuCount CONSTANT)

public:
    // fileName empty: the platform's default QSettings; otherwise an INI file.
    explicit AppSettings(const QString& fileName = {}, QObject* parent = nullptr);

    // Everything the engine worker needs for a reply, merged with a
    // conversation's overrides, each number within its range.
    GenerationSettings generationSettings(const GenerationOverrides& overrides = {}) const;
    // The engine's thread count for the threads setting: 0 is every CPU this
    // process may run on, and no setting goes past that count.
    static int engineThreads(int setting);
    static int cpuCount();
    Q_INVOKABLE void resetToDefaults();
    static QVariantMap generationLimits();
    void sync();

signals:
    void changed();

private:
    QVariant value(const QString& key, const QVariant& def) const;
    void setValue(const QString& key, const QVariant& v);
    std::unique_ptr<QSettings> settings_;
};

#undef CAIRN_SETTING

}  // namespace cairn::app
