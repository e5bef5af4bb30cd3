#include "model_fit.h"

#include <QFile>

#include <vector>

namespace cairn::hub {

Fit estimateFit(uint64_t needed, uint64_t available) {
    if (needed == 0 || available == 0) return Fit::Unknown;
    if (needed <= available / 10 * 7) return Fit::Fits;
    if (needed <= available) return Fit::Tight;
    return Fit::WontFit;
}

QString fitLabel(Fit fit) {
    switch (fit) {
    case Fit::Fits: return QStringLiteral("fits");
    case Fit::Tight: return QStringLiteral("tight");
    case Fit::WontFit: return QStringLiteral("won't fit");
    case Fit::Unknown: break;
    }
    return {};
}

uint64_t availableMemoryBytes() {
    QFile f(QStringLiteral("/proc/meminfo"));
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (QByteArray line = f.readLine(4096); !line.isEmpty(); line = f.readLine(4096)) {
        if (!line.startsWith("MemAvailable:")) continue;
        const QList<QByteArray> parts = line.simplified().split(' ');
        bool ok = false;
        const uint64_t kib = parts.size() >= 2 ? parts[1].toULongLong(&ok) : 0;
        return ok ? kib * 1024 : 0;
    }
    return 0;
}

const QStringList& supportedArchitectures() {
    static const QStringList list = {"llama",         "qwen2",  "qwen3",  "mamba", "mamba2", "lfm2",
                                     "granitehybrid", "qwen35", "gemma3", "phi3",  "smollm3"};
    return list;
}

bool isSupportedArchitecture(const QString& architecture) { return supportedArchitectures().contains(architecture); }

const std::vector<Recommended>& recommendedModels() {
    static const std::vector<Recommended> list = {
        {"Qwen/Qwen2.5-0.5B-Instruct-GGUF", "Qwen2.5 0.5B Instruct: the smallest that chats well"},
        {"Qwen/Qwen3-0.6B-GGUF", "Qwen3 0.6B: small, with thinking"},
        {"HuggingFaceTB/SmolLM2-360M-Instruct-GGUF", "SmolLM2 360M Instruct (llama): tiny and fast"},
        {"bartowski/Llama-3.2-1B-Instruct-GGUF", "Llama 3.2 1B Instruct"},
        {"ggml-org/gemma-3-1b-it-GGUF", "Gemma 3 1B it"},
        {"LiquidAI/LFM2-1.2B-GGUF", "LFM2 1.2B: a hybrid, quick on CPUs"},
    };
    return list;
}

}  // namespace cairn::hub
