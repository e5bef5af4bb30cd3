// A tiny random Mamba-1 or Mamba-2 model written with our gguf::Writer (the tensor names
// and shapes of llama.cpp's `mamba` architecture), with the tiny byte-level
// vocabulary of tiny_models.h so that Model::load attaches a tokenizer.
#pragma once

#include "cairn/gguf.h"
#include "cairn/tensor_type.h"

#include <cstdint>
#include <string>

namespace cairn::test {

struct TinyMambaOptions {
    TensorType type = TensorType::F32;  // ssm_in, ssm_x, ssm_out, token_embd: F32, F16, Q8_0 (rows of 32k)
    uint32_t seed = 7;
    int64_t layers = 2;
    int64_t embedding = 64;
    int64_t inner = 136;  // d_inner: not a multiple of the 16-channel blocks, on purpose
    int64_t state = 16;  // d_state
    int64_t conv = 4;  // d_conv
    int64_t dtRank = 4;
    bool tied = true;
    bool dtBcRms = false;  // ssm.dt_b_c_rms (unsupported: the loader must refuse it)
    // Mamba-2 (`mamba2`): heads (ssm.time_step_rank) and groups; dtRank unused.
    bool mamba2 = false;
    int64_t heads = 8;
    int64_t groups = 2;
};

gguf::Writer tinyMambaWriter(const TinyMambaOptions& options);
std::string writeTinyMamba(const std::string& path, const TinyMambaOptions& options);

}  // namespace cairn::test
