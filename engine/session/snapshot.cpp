// Snapshot format, version 3 (all integers little-endian):
//
//   "CAIRNSNP"                 8 bytes magic
//   u32 version                = 3 (1 and 2 are read too: version 1 ends before the checkpoints;
//                                version 2 has no hybrid checkpoints, otherwise the same bytes)
//   u64 model fingerprint      modelFingerprint()
//   u32 n, n bytes             architecture
//   u32 kv storage             0 native, 1 f16, 2 q8_0 (K/V tensors only)
//   u64 n, n × i32             token ids
//   u64 n, n × f32             logits after the last token
//   state                      the memory after the last token:
//     u32 n tensors, then for each:
//       u32 n, n bytes name; u32 stored type (cairn::TensorType); i64 rows; i64 cols; rows × row bytes
//   u32 n                      checkpoints (recurrent memory only), positions ascending, then for each:
//     u64 position             1 … token count
//     u8 current               1: the state above is this checkpoint's and nothing follows
//     u64 n, n × f32           logits after the checkpoint's position
//     state                    the memory at that position, as above, but only the tensors that
//                              cannot be cut back (Memory::checkpoint(): for a hybrid model its
//                              recurrent layers; the K/V rows are the state's above, cut back)
//   u64 checksum               XXH3-64 of every byte before it
//
// The checkpoints are the latest message boundaries (kSnapshotCheckpoints), so
// that after a restore regenerating the last reply or editing the last message
// does not re-read the whole conversation on recurrent memory. A restored
// session keeps them as these bytes until it uses one (state_bytes.h).
//
// Restore verifies the checksum before reading anything else, then the magic,
// version, fingerprint, architecture and every tensor's name and shape against
// a fresh memory of the same model.
#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/session.h"

#include "session/state_bytes.h"

#include <xxhash.h>

#include <cstring>

namespace cairn {
namespace {

using session::ByteReader;
using session::ByteWriter;

constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'S', 'N', 'P'};
constexpr uint32_t kVersion = 3;
constexpr size_t kSnapshotCheckpoints = 3;  // the reply's end, its prompt's end, the previous reply's end
const char* const kWhere = "snapshot";

void writeLogits(ByteWriter& w, const std::vector<float>& logits) {
    w.put<uint64_t>(logits.size());
    w.bytes(logits.data(), logits.size() * sizeof(float));
}

std::vector<float> readLogits(ByteReader& r, uint64_t expected) {
    auto n = r.get<uint64_t>("logit count");
    if (n != expected) throw Error(kWhere, "logit count does not match the model");
    auto* bytes = r.take(n * sizeof(float), "logits");
    std::vector<float> logits(static_cast<size_t>(n));
    if (!logits.empty()) std::memcpy(logits.data(), bytes, logits.size() * sizeof(float));
    return logits;
}

}  // namespace

uint64_t modelFingerprint(const Model& model) {
    auto header = model.file().headerBytes();
    return XXH3_64bits_withSeed(header.data(), header.size(), model.file().fileSize());
}

std::vector<uint8_t> Session::snapshot(KvStorage storage) const {
    ByteWriter w;
    w.bytes(kMagic, sizeof kMagic);
    w.put<uint32_t>(kVersion);
    w.put<uint64_t>(modelFingerprint(model_));
    w.str(model_.info().architecture);
    w.put<uint32_t>(uint32_t(storage));
    w.put<uint64_t>(tokens_.size());
    w.bytes(tokens_.data(), tokens_.size() * sizeof(int32_t));
    writeLogits(w, logits_);
    session::writeState(w, *memory_, storage);

    // Checkpoints are kept sorted by position; all of them lie on the current history.
    const int64_t now = int64_t(tokens_.size());
    std::vector<const Checkpoint*> kept;
    for (const auto& c : checkpoints_)
        if (c.position >= 1 && c.position <= now) kept.push_back(&c);
    if (kept.size() > kSnapshotCheckpoints) kept.erase(kept.begin(), kept.end() - std::ptrdiff_t(kSnapshotCheckpoints));
    w.put<uint32_t>(uint32_t(kept.size()));
    for (const Checkpoint* c : kept) {
        w.put<uint64_t>(uint64_t(c->position));
        const bool current = c->position == now;
        w.put<uint8_t>(current ? 1 : 0);
        if (current) continue;
        writeLogits(w, c->logits);
        if (c->memory) session::writeState(w, *c->memory, storage);
        else session::writeStoredState(w, *c->stored, *memory_);
    }
    w.put<uint64_t>(XXH3_64bits(w.out.data(), w.out.size()));
    return std::move(w.out);
}

void Session::restore(std::span<const uint8_t> snapshot) { restoreBytes(snapshot, nullptr); }

void Session::restore(std::vector<uint8_t>&& snapshot) {
    auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(snapshot));
    restoreBytes(*owned, owned);
}

void Session::restoreBytes(std::span<const uint8_t> snapshot, std::shared_ptr<const std::vector<uint8_t>> owner) {
    reset();
    if (snapshot.size() < sizeof kMagic + sizeof(uint64_t)) throw Error(kWhere, "too short to be a snapshot");
    if (std::memcmp(snapshot.data(), kMagic, sizeof kMagic) != 0)
        throw Error(kWhere, "not a Cairn snapshot (wrong magic)");
    auto body = snapshot.first(snapshot.size() - sizeof(uint64_t));
    uint64_t stored;
    std::memcpy(&stored, snapshot.data() + body.size(), sizeof stored);
    if (XXH3_64bits(body.data(), body.size()) != stored) throw Error(kWhere, "checksum mismatch (damaged data)");

    ByteReader r(body);
    r.take(sizeof kMagic, "magic");
    auto version = r.get<uint32_t>("version");
    if (version < 1 || version > kVersion)
        throw Error(kWhere,
                    "unsupported snapshot version " + std::to_string(version) + " (this build reads 1 to " +
                        std::to_string(kVersion) + ")");
    if (r.get<uint64_t>("fingerprint") != modelFingerprint(model_))
        throw Error(kWhere, "taken with another model file");
    auto arch = r.str("architecture");
    if (arch != model_.info().architecture) throw Error(kWhere, "architecture '" + arch + "' does not match the model");
    r.get<uint32_t>("kv storage");
    auto nTokens = r.get<uint64_t>("token count");
    if (nTokens > uint64_t(memory_->capacity()))
        throw Error(kWhere,
                    std::to_string(nTokens) + " tokens do not fit the context of " +
                        std::to_string(memory_->capacity()));
    auto* tokenBytes = r.take(nTokens * sizeof(int32_t), "tokens");
    std::vector<int32_t> tokens(static_cast<size_t>(nTokens));
    if (!tokens.empty()) std::memcpy(tokens.data(), tokenBytes, tokens.size() * sizeof(int32_t));
    for (auto t : tokens)
        if (t < 0 || t >= model_.info().vocabSize)
            throw Error(kWhere, "token id " + std::to_string(t) + " out of range");
    const uint64_t vocab = uint64_t(model_.info().vocabSize);
    auto logits = readLogits(r, nTokens ? vocab : 0);

    // The state is read into the session's own memory, which reset() emptied in
    // place: a new one would allocate every recurrent state once more only to be
    // overwritten (granite-4.0-h-1b: 54 MiB, zero-filled page by page).
    Memory* memory = memory_.get();
    std::vector<Checkpoint> checkpoints;
    std::vector<std::shared_ptr<session::StoredState>> storedStates;  // their bytes are set once all is read
    try {
        memory->resizeForRestore(int64_t(nTokens));
        const size_t stateOffset = r.offset();
        session::readState(r, *memory);

        if (version >= 2) {
            auto n = r.get<uint32_t>("checkpoint count");
            if (n > 0 && memory->canTruncate())
                throw Error(kWhere, "checkpoints stored for memory that does not take them");
            if (n > kSnapshotCheckpoints)
                throw Error(kWhere,
                            std::to_string(n) + " checkpoints, at most " + std::to_string(kSnapshotCheckpoints) +
                                " are stored");
            const size_t stateBytes = n > 0 ? session::checkpointBytes(*memory) : 0;  // the same for every checkpoint
            for (uint32_t i = 0; i < n; ++i) {
                auto position = r.get<uint64_t>("checkpoint position");
                if (position < 1 || position > nTokens ||
                    (!checkpoints.empty() && position <= uint64_t(checkpoints.back().position)))
                    throw Error(kWhere,
                                "checkpoint at position " + std::to_string(position) +
                                    " is out of order or outside the history");
                auto current = r.get<uint8_t>("checkpoint flag");
                if (current > 1 || (current == 1) != (position == nTokens))
                    throw Error(kWhere, "checkpoint at position " + std::to_string(position) + " has a bad flag");
                // Kept as the snapshot's bytes until used (state_bytes.h): the
                // current one is the state just read, the others are checked here.
                Checkpoint c{int64_t(position), nullptr, {}, nullptr};
                auto stored = std::make_shared<session::StoredState>();
                stored->bytes = stateBytes;
                if (current) {
                    stored->offset = stateOffset;
                    c.logits = logits;
                } else {
                    c.logits = readLogits(r, vocab);
                    stored->offset = r.offset();
                    session::skipCheckpointState(r, *memory);
                }
                c.stored = stored;
                storedStates.push_back(std::move(stored));
                checkpoints.push_back(std::move(c));
            }
        }
        if (r.remaining() != 0)
            throw Error(kWhere, std::to_string(r.remaining()) + " unexpected bytes after the state");
    } catch (...) {
        memory_ = model_.newMemory(options_.memory);  // nothing half-read stays behind
        throw;
    }
    if (!checkpoints.empty() && !owner)  // a borrowed span: the stored checkpoints need bytes of their own
        owner = std::make_shared<const std::vector<uint8_t>>(snapshot.begin(), snapshot.end());
    for (auto& stored : storedStates) stored->snapshot = owner;
    tokens_ = std::move(tokens);
    logits_ = std::move(logits);
    checkpoints_ = std::move(checkpoints);
}

}  // namespace cairn
