// The start of a GGUF file read before downloading it (a ranged request of
// its first bytes): the architecture and the sizes the memory estimate needs.
// The engine's reader validates a whole file; this reads only the metadata
// that arrived, with every length checked against the buffer, and stops
// where the bytes end.
#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cairn::hub {

// How much of a file the peek asks for: the general.* and architecture keys
// come before the tokenizer's large arrays in the files we have seen.
constexpr qint64 kPeekBytes = 256 * 1024;

struct GgufPeek {
    QString architecture;  // general.architecture ("" when not in the bytes)
    QString name;  // general.name
    std::map<std::string, int64_t> integers;  // integer scalars by key (at most 1,000)
    std::vector<int64_t> kvHeadsPerLayer;  // {arch}.attention.head_count_kv when it is an array
    bool complete = false;  // every key-value pair was inside the bytes
};

// Throws cairn::Error naming `where` when the bytes are not the start of a GGUF file.
GgufPeek peekGguf(const QByteArray& bytes, const QString& where);

// f16 K/V bytes of one session at `ctx` tokens, from the peeked sizes
// (nullopt when they are missing or make no sense; 0 for recurrent-only models).
std::optional<uint64_t> kvCacheBytes(const GgufPeek& peek, int64_t ctx);

}  // namespace cairn::hub
