// Loaded models and the per-conversation memory they compute with.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cairn {

class ExecContext;
class Tokenizer;
namespace model {
class OwnedWeights;
}
namespace gguf {
class File;
}

enum class KvType { F32, F16 };

struct ModelInfo {
    std::string architecture;  // "llama", "qwen2", "qwen3", "mamba"
    std::string name;  // general.name
    int64_t vocabSize = 0;
    int64_t trainedContext = 0;
    int64_t layers = 0;
    int64_t embedding = 0;
    uint64_t parameters = 0;
    bool recurrent = false;  // some state cannot be rewound (Mamba, hybrids): sessions take checkpoints
};

struct MemoryOptions {
    int64_t contextSize = 4096;  // attention models: KV cache capacity in tokens
    KvType kvType = KvType::F16;
};

// A 2-D block of memory state (rows × cols elements of F32 or F16, rows
// `rowStride` bytes apart), for snapshots: attention memory gives the first
// size() positions of each layer's K and V for each KV head, recurrent memory
// its conv and SSM state per layer.
struct StateTensor {
    std::string name;  // e.g. "blk.3.k.h1", "blk.0.ssm"
    int typeId = 0;  // a cairn::TensorType value: F32 or F16
    int64_t rows = 0;
    int64_t cols = 0;
    size_t rowStride = 0;
    uint8_t* data = nullptr;
    bool attention = false;  // K/V rows: cut back on rewind, may be stored in a smaller type
};

// One conversation's model state: KV cache for attention layers, conv/SSM
// state for recurrent layers (a hybrid model has both, one kind per layer).
class Memory {
public:
    virtual ~Memory() = default;
    virtual int64_t size() const = 0;  // positions fed so far
    virtual int64_t capacity() const = 0;  // positions it can hold
    virtual bool canTruncate() const = 0;  // attention memory can be cut back; recurrent cannot
    virtual void truncate(int64_t n) = 0;  // keep positions [0, n); throws cairn::Error if impossible
    virtual std::unique_ptr<Memory> clone() const = 0;  // an independent, complete copy
    virtual size_t bytes() const = 0;  // bytes allocated

    // Checkpoints of memory that cannot be cut back (canTruncate() false):
    // checkpoint() keeps what a later restoreCheckpoint() needs to bring this
    // memory back to the current position — a full copy for recurrent memory,
    // only the recurrent layers' state plus the position for a hybrid (its
    // attention layers are cut back instead). restoreCheckpoint() takes one of
    // this memory's own checkpoints at or before size(); throws cairn::Error
    // for anything else.
    virtual std::unique_ptr<Memory> checkpoint() const { return clone(); }
    virtual void restoreCheckpoint(const Memory& checkpoint);

    // Snapshot support. state() views the current state in place; restoring
    // calls resizeForRestore(n) first, then fills the views of state().
    virtual std::vector<StateTensor> state();
    virtual void resizeForRestore(int64_t n);
};

class Model {
public:
    // Maps and validates the file; throws cairn::Error naming an unsupported
    // architecture, feature, or the tensor and type we cannot compute with.
    static std::unique_ptr<Model> load(const std::string& path);
    virtual ~Model();

    const ModelInfo& info() const { return info_; }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    const gguf::File& file() const { return *file_; }
    // Bytes of weights copied into the model's own memory instead of read
    // from the file's mapping (engine/model/owned_weights.h), and of those the
    // ones re-ordered into 16-row tiles for this CPU's decode kernels.
    size_t ownedWeightBytes() const;
    size_t tiledWeightBytes() const;

    virtual std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const = 0;

    // One pass over the weights for `tokens` at positions mem.size() onwards,
    // appending them to `mem`. Writes logits for every position
    // (tokens.size() × vocabSize floats) when allLogits, else for the last one.
    // logits may be null: no logits are computed (the output matmul is skipped).
    // Throws cairn::Error when the memory's capacity would be exceeded.
    virtual void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                         ExecContext& ctx) const = 0;

protected:
    Model(std::unique_ptr<gguf::File> file);
    std::unique_ptr<gguf::File> file_;
    // Weights copied for decode (engine/model/owned_weights.h), for the TensorBinder.
    std::unique_ptr<model::OwnedWeights> ownedWeights_;
    std::unique_ptr<Tokenizer> tokenizer_;
    ModelInfo info_;
};

// Prefill chunk size chosen by measurement (docs/PERFORMANCE.md, "Prefill
// chunk size"): float weights are converted once per chunk, so F16 prefill
// gains 6-10 % from 128 to 512; quantized weights are flat. Stop and progress
// act between layers (LayerWatch), not once a chunk.
constexpr int64_t kDefaultPrefillChunk = 512;

// Feeds `tokens` in chunks of at most `chunk` positions (prefill). Logits as in
// Model::forward: all positions when allLogits, else only the last.
void prefill(const Model& model, Memory& mem, std::span<const int32_t> tokens, int64_t chunk, bool allLogits,
             float* logits, ExecContext& ctx);

}  // namespace cairn
