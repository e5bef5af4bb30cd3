#include "model_catalog.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tensor_type.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cairn::app {
namespace {

// KV heads of each layer: attention.head_count_kv is one number or, in hybrids
// (lfm2, granitehybrid), one per layer with 0 for a recurrent layer; qwen35
// has attention only every full_attention_interval layers.
std::vector<int64_t> kvHeadsPerLayer(const gguf::File& f, const std::string& arch, int64_t layers, int64_t heads) {
    std::vector<int64_t> out(size_t(std::clamp<int64_t>(layers, 0, 4096)), heads);
    if (const auto* v = f.find(arch + ".attention.head_count_kv")) {
        if (v->isArray() && v->elementType() != gguf::ValueType::String && v->elementType() != gguf::ValueType::Array) {
            const auto n = v->numbers();
            for (size_t l = 0; l < out.size(); ++l) out[l] = l < n.size() ? int64_t(n[l]) : 0;
        } else if (v->isInteger()) {
            std::fill(out.begin(), out.end(), v->asInt());
        }
    }
    if (int64_t every = f.getInt(arch + ".full_attention_interval", 0); every > 0)
        for (size_t l = 0; l < out.size(); ++l)
            if ((int64_t(l) + 1) % every != 0) out[l] = 0;
    return out;
}

uint64_t memoryBytes(const gguf::File& f, int64_t ctx) {
    std::string arch = f.architecture();
    int64_t layers = f.getInt(arch + ".block_count", 0);
    if (arch == "mamba") {
        int64_t inner = f.getInt("mamba.ssm.inner_size", 0), state = f.getInt("mamba.ssm.state_size", 0);
        int64_t conv = f.getInt("mamba.ssm.conv_kernel", 0);
        return uint64_t(layers * inner * (state + conv - 1) * 4);
    }
    int64_t embd = f.getInt(arch + ".embedding_length", 0);
    const auto* headsValue = f.find(arch + ".attention.head_count");
    int64_t heads = headsValue && headsValue->isInteger() ? headsValue->asInt() : 0;
    if (headsValue && headsValue->isArray() && headsValue->elementType() != gguf::ValueType::String)
        for (double h : headsValue->numbers()) heads = std::max(heads, int64_t(h));
    if (heads <= 0) return 0;
    int64_t keyLen = f.getInt(arch + ".attention.key_length", embd / heads);
    int64_t valueLen = f.getInt(arch + ".attention.value_length", embd / heads);
    // Recurrent layers of a hybrid: a state per layer (f32), whatever the context.
    int64_t inner = f.getInt(arch + ".ssm.inner_size", 0), state = f.getInt(arch + ".ssm.state_size", 0);
    int64_t conv = std::max<int64_t>(f.getInt(arch + ".ssm.conv_kernel", f.getInt(arch + ".shortconv.l_cache", 1)), 1);
    int64_t recurrentLayer = (inner > 0 ? inner * state + (inner + 2 * state) * (conv - 1) : embd * (conv - 1)) * 4;
    uint64_t total = 0;
    for (int64_t kv : kvHeadsPerLayer(f, arch, layers, heads))
        total += kv > 0 ? uint64_t(ctx * kv * (keyLen + valueLen) * 2) : uint64_t(std::max<int64_t>(recurrentLayer, 0));
    return total;
}

} // namespace

ModelFileInfo describeModelFile(const QString& path) {
    ModelFileInfo info;
    QFileInfo fi(path);
    info.path = fi.absoluteFilePath();
    info.fileName = fi.fileName();
    info.name = fi.completeBaseName();
    info.fileSize = quint64(fi.size());
    info.placeholder = info.fileName.contains(QLatin1String("placeholder-random"));
    info.demo = info.fileName.startsWith(QLatin1String("cairn-demo-"));
    try {
        auto file = gguf::File::open(path.toStdString());
        info.architecture = QString::fromStdString(file.architecture());
        if (auto n = file.getString("general.name"); !n.empty()) info.name = QString::fromUtf8(n.data(), qsizetype(n.size()));
        std::map<std::string, uint64_t> elementsByType;
        for (const auto& t : file.tensors()) {
            info.parameters += uint64_t(t.elements());
            if (t.nDims >= 2) elementsByType[std::string(tensorTypeName(t.type))] += uint64_t(t.elements());
        }
        uint64_t best = 0;
        for (const auto& [type, n] : elementsByType)
            if (n > best) { best = n; info.quantization = QString::fromStdString(type); }
        std::string arch = file.architecture();
        info.contextLength = file.getInt(arch + ".context_length", 0);
        int64_t ctx = info.contextLength > 0 ? std::min<int64_t>(info.contextLength, 4096) : 4096;
        info.ramEstimate = file.fileSize() + memoryBytes(file, ctx);
        if (info.architecture.isEmpty()) info.error = QStringLiteral("no general.architecture in the file");
    } catch (const std::exception& e) {
        info.error = QString::fromUtf8(e.what());
    }
    return info;
}

quint64 sessionMemoryBytes(const QString& path, qint64 ctx) {
    try {
        return memoryBytes(gguf::File::open(path.toStdString()), ctx);
    } catch (const std::exception&) {
        return 0;
    }
}

QStringList findModelFiles(const QStringList& folders) {
    QStringList out;
    for (const auto& folder : folders) {
        QDir dir(folder);
        if (!dir.exists()) continue;
        for (const auto& fi : dir.entryInfoList({QStringLiteral("*.gguf")}, QDir::Files | QDir::Readable, QDir::Name))
            if (!out.contains(fi.absoluteFilePath())) out << fi.absoluteFilePath();
    }
    return out;
}

QString humanBytes(quint64 bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double b = double(bytes);
    int u = 0;
    while (b >= 1024 && u < 4) { b /= 1024; ++u; }
    return u == 0 ? QStringLiteral("%1 B").arg(bytes) : QStringLiteral("%1 %2").arg(b, 0, 'f', 1).arg(QLatin1String(units[u]));
}

QString humanCount(quint64 count) {
    if (count >= 1000000000ull) return QStringLiteral("%1 B").arg(count / 1e9, 0, 'f', 2);
    if (count >= 1000000ull) return QStringLiteral("%1 M").arg(count / 1e6, 0, 'f', 1);
    if (count >= 1000ull) return QStringLiteral("%1 K").arg(count / 1e3, 0, 'f', 1);
    return QString::number(count);
}

} // namespace cairn::app
