#include "model_catalog.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tensor_type.h"

#include <QDir>
#include <QFileInfo>

#include <initializer_list>
#include <map>
#include <optional>

namespace cairn::app {
namespace {

// The product of non-negative factors, or nullopt when one is negative or it
// does not fit: header values are untrusted (a hostile file sets 2^62 layers).
std::optional<uint64_t> product(std::initializer_list<int64_t> factors) {
    uint64_t r = 1;
    for (int64_t f : factors) {
        if (f < 0 || __builtin_mul_overflow(r, uint64_t(f), &r)) return std::nullopt;
    }
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
    int64_t embd = f.getInt(arch + ".embedding_length", 0);
    int64_t heads = f.getInt(arch + ".attention.head_count", 0);
    int64_t kvHeads = f.getInt(arch + ".attention.head_count_kv", heads);
    if (heads <= 0) return 0;
    int64_t keyLen = f.getInt(arch + ".attention.key_length", embd / heads);
    int64_t valueLen = f.getInt(arch + ".attention.value_length", embd / heads);
    int64_t headBytes = 0;
    if (keyLen < 0 || valueLen < 0 || __builtin_add_overflow(keyLen, valueLen, &headBytes)) return std::nullopt;
    return product({layers, ctx, kvHeads, headBytes, 2});
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
            const auto elements = product({t.ne[0], t.ne[1], t.ne[2], t.ne[3]});
            if (!elements || __builtin_add_overflow(info.parameters, *elements, &info.parameters))
                throw Error("gguf", "tensor " + std::string(t.name) + ": its element count does not fit in 64 bits");
            if (t.nDims >= 2) elementsByType[std::string(tensorTypeName(t.type))] += *elements;
        }
        uint64_t best = 0;
        for (const auto& [type, n] : elementsByType)
            if (n > best) { best = n; info.quantization = QString::fromStdString(type); }
        std::string arch = file.architecture();
        info.contextLength = file.getInt(arch + ".context_length", 0);
        int64_t ctx = info.contextLength > 0 ? std::min<int64_t>(info.contextLength, 4096) : 4096;
        // Unknown (0, shown as such) when the header's sizes make no sense.
        const auto session = memoryBytes(file, ctx);
        if (!session || __builtin_add_overflow(uint64_t(file.fileSize()), *session, &info.ramEstimate)) info.ramEstimate = 0;
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
