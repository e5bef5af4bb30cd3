// Describes GGUF model files cheaply for the model picker (metadata only, the
// weights are never read) and finds them in folders.
#pragma once

#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace cairn::app {

struct ModelFileInfo {
    QString path;
    QString fileName;
    QString name;  // general.name, else the file name
    QString architecture;
    quint64 parameters = 0;
    QString quantization;  // the tensor type holding most weights, e.g. "Q4_0"
    quint64 fileSize = 0;
    qint64 contextLength = 0;  // trained context
    quint64 ramEstimate = 0;  // mapped weights + session memory at min(context, 4096)
    bool bundled = false;
    bool placeholder = false;  // random weights: produces random text
    bool demo = false;  // Cairn's tiny trained demo: knows only its few taught tasks
    QString error;  // why it cannot be used; empty when fine
    // A model of a remote OpenAI-compatible server (path is remoteModelId()).
    bool remote = false;
    QString endpoint;  // its base URL
    QString remoteModel;  // the id the server lists
};

// How a remote model is named where a file would give its path (settings'
// last model, the picker): "BASEURL#MODEL".
QString remoteModelId(const QString& baseUrl, const QString& model);
// The inverse; false for a file path.
bool parseRemoteModelId(const QString& id, QString* baseUrl, QString* model);

// Reads the file's header; never throws (a bad file gets `error`).
ModelFileInfo describeModelFile(const QString& path);
// Bytes of per-conversation memory at `ctx` tokens (f16 KV cache, or Mamba's state).
quint64 sessionMemoryBytes(const QString& path, qint64 ctx);
// `*.gguf` files directly in each folder, sorted by name; missing folders are skipped.
QStringList findModelFiles(const QStringList& folders);
// "1.5 GiB" style sizes; "12.3 M" style counts.
QString humanBytes(quint64 bytes);
QString humanCount(quint64 count);

}  // namespace cairn::app
