#include "model_catalog.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tensor_type.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
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
            for (size_t l = 0; l < out.size(); ++l)  // clamped before the cast: the values are untrusted
                out[l] = l < n.size() && n[l] > 0 ? int64_t(std::min(n[l], 1e6)) : 0;
        } else if (v->isInteger()) {
            std::fill(out.begin(), out.end(), v->asInt());
        }
    }
    if (int64_t every = f.getInt(arch + ".full_attention_interval", 0); every > 0)
        for (size_t l = 0; l < out.size(); ++l)
            if ((int64_t(l) + 1) % every != 0) out[l] = 0;
    return out;
}

// The product of non-negative factors, or nullopt when one is negative or it
// does not fit: header values are untrusted (a hostile file sets 2^62 layers).
std::optional<uint64_t> product(std::initializer_list<int64_t> factors) {
    uint64_t r = 1;
    for (int64_t f : factors) {
        if (f < 0 || __builtin_mul_overflow(r, uint64_t(f), &r)) return std::nullopt;
    }
    return r;
}

std::optional<uint64_t> sum(std::optional<uint64_t> a, std::optional<uint64_t> b) {
    uint64_t r = 0;
    if (!a || !b || __builtin_add_overflow(*a, *b, &r)) return std::nullopt;
    return r;
}

std::optional<uint64_t> times(std::optional<uint64_t> a, int64_t b) {
    uint64_t r = 0;
    if (!a || b < 0 || __builtin_mul_overflow(*a, uint64_t(b), &r)) return std::nullopt;
    return r;
}

std::optional<uint64_t> memoryBytes(const gguf::File& f, int64_t ctx) {
    std::string arch = f.architecture();
    int64_t layers = f.getInt(arch + ".block_count", 0);
    if (arch == "mamba") {
        int64_t inner = f.getInt("mamba.ssm.inner_size", 0), state = f.getInt("mamba.ssm.state_size", 0);
        int64_t conv = f.getInt("mamba.ssm.conv_kernel", 0);
        int64_t window = 0;
        if (__builtin_add_overflow(state, conv - 1, &window)) return std::nullopt;
        return product({layers, inner, window, 4});
    }
    // More layers than any model has (the engine refuses over 4096): no estimate.
    if (layers < 1 || layers > 4096) return std::nullopt;
    int64_t embd = f.getInt(arch + ".embedding_length", 0);
    const auto* headsValue = f.find(arch + ".attention.head_count");
    int64_t heads = headsValue && headsValue->isInteger() ? headsValue->asInt() : 0;
    if (headsValue && headsValue->isArray() && headsValue->elementType() != gguf::ValueType::String)
        for (double h : headsValue->numbers()) heads = std::max(heads, h > 0 ? int64_t(std::min(h, 1e6)) : int64_t(0));
    if (heads <= 0) return 0;
    int64_t keyLen = f.getInt(arch + ".attention.key_length", embd / heads);
    int64_t valueLen = f.getInt(arch + ".attention.value_length", embd / heads);
    // Recurrent layers of a hybrid: a state per layer (f32), whatever the context.
    int64_t inner = f.getInt(arch + ".ssm.inner_size", 0), state = f.getInt(arch + ".ssm.state_size", 0);
    int64_t conv = std::max<int64_t>(f.getInt(arch + ".ssm.conv_kernel", f.getInt(arch + ".shortconv.l_cache", 1)), 1);
    const std::optional<uint64_t> convRow = sum(product({inner}), product({state, 2}));
    const std::optional<uint64_t> recurrentLayer =
        inner > 0 ? times(sum(product({inner, state}), times(convRow, conv - 1)), 4) : product({embd, conv - 1, 4});
    int64_t headBytes = 0;
    if (keyLen < 0 || valueLen < 0 || __builtin_add_overflow(keyLen, valueLen, &headBytes)) return std::nullopt;
    uint64_t total = 0;
    for (int64_t kv : kvHeadsPerLayer(f, arch, layers, heads)) {
        const std::optional<uint64_t> layer = kv > 0 ? product({ctx, kv, headBytes, 2}) : recurrentLayer;
        const auto grown = sum(total, layer);
        if (!grown) return std::nullopt;
        total = *grown;
    }
    return total;
}

}  // namespace

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
        if (auto n = file.getString("general.name"); !n.empty())
            info.name = QString::fromUtf8(n.data(), qsizetype(n.size()));
        std::map<std::string, uint64_t> elementsByType;
        for (const auto& t : file.tensors()) {
            const auto elements = product({t.ne[0], t.ne[1], t.ne[2], t.ne[3]});
            if (!elements || __builtin_add_overflow(info.parameters, *elements, &info.parameters))
                throw Error("gguf", "tensor " + std::string(t.name) + ": its element count does not fit in 64 bits");
            if (t.nDims >= 2) elementsByType[std::string(tensorTypeName(t.type))] += *elements;
        }
        uint64_t best = 0;
        for (const auto& [type, n] : elementsByType)
            if (n > best) {
                best = n;
                info.quantization = QString::fromStdString(type);
            }
        std::string arch = file.architecture();
        info.contextLength = file.getInt(arch + ".context_length", 0);
        int64_t ctx = info.contextLength > 0 ? std::min<int64_t>(info.contextLength, 4096) : 4096;
        // Unknown (0, shown as such) when the header's sizes make no sense.
        const auto session = memoryBytes(file, ctx);
        if (!session || __builtin_add_overflow(uint64_t(file.fileSize()), *session, &info.ramEstimate))
            info.ramEstimate = 0;
        if (info.architecture.isEmpty()) info.error = QStringLiteral("no general.architecture in the file");
    } catch (const std::exception& e) {
        info.error = QString::fromUtf8(e.what());
    }
    return info;
}

quint64 sessionMemoryBytes(const QString& path, qint64 ctx) {
    try {
        return memoryBytes(gguf::File::open(path.toStdString()), ctx).value_or(0);
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
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    return u == 0 ? QStringLiteral("%1 B").arg(bytes)
                  : QStringLiteral("%1 %2").arg(b, 0, 'f', 1).arg(QLatin1String(units[u]));
}

QString humanCount(quint64 count) {
    if (count >= 1000000000ull) return QStringLiteral("%1 B").arg(count / 1e9, 0, 'f', 2);
    if (count >= 1000000ull) return QStringLiteral("%1 M").arg(count / 1e6, 0, 'f', 1);
    if (count >= 1000ull) return QStringLiteral("%1 K").arg(count / 1e3, 0, 'f', 1);
    return QString::number(count);
}

QString remoteModelId(const QString& baseUrl, const QString& model) { return baseUrl + QLatin1Char('#') + model; }

bool parseRemoteModelId(const QString& id, QString* baseUrl, QString* model) {
    if (!id.startsWith(QLatin1String("http://")) && !id.startsWith(QLatin1String("https://"))) return false;
    const qsizetype hash = id.indexOf(QLatin1Char('#'));  // a base URL has no #; a model id may
    if (hash < 0 || hash + 1 >= id.size()) return false;
    *baseUrl = id.left(hash);
    *model = id.mid(hash + 1);
    return true;
}

}  // namespace cairn::app
