#!/usr/bin/python3
"""Exports a trained demo model to GGUF and writes its PyTorch oracle.

  export_gguf.py OUT_DIR llama|mamba MODEL.gguf ORACLE.json [--prompts 12]

2-D weights are stored F16, norms, biases, conv taps, ssm_a and ssm_d F32 (as
llama.cpp's converter does). The oracle is computed in float64 from exactly
the stored values (F16-rounded weights), so it checks the engine's math, not
the rounding: for a dozen held-out prompts (ChatML, generation prompt
appended) it records the token ids, the full logits at the last position, the
top-20 logits at every prompt position, and 32 greedy tokens.
"""
import argparse
import json

import numpy as np
import torch

from chatml import ChatTokenizer
from gguf_writer import GGUFWriter, STRING, U32, I32, F32, BOOL, GGML_F16, GGML_F32
from models import build

CHAT_TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
                 "+ '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
                 "{% endif %}")

NAMES = {"llama": "Cairn demo (transformer)", "mamba": "Cairn demo (Mamba)"}
DESCRIPTION = ("A tiny {what} (about {params} parameters) trained by the Cairn developers on a small synthetic chat "
               "dataset, so Cairn works without a download. It was taught only greetings, small arithmetic, counting, "
               "spelling words letter by letter, days and months, simple unit conversions, short facts about using "
               "Cairn, and to decline questions about news, weather or you. Outside those it knows nothing, makes "
               "answers up and cannot hold a real conversation: do not rely on it. Download a real model for actual use.")
WHAT = {"llama": "transformer (llama architecture)", "mamba": "Mamba state-space model"}


def tokenizer_metadata(w, tok):
    sp = tok.sp
    n = sp.get_piece_size()
    types = []
    for i in range(n):
        types.append(2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 6 if sp.is_byte(i) else
                     5 if sp.is_unused(i) else 1)
    w.add("tokenizer.ggml.model", STRING, "llama")
    w.add("tokenizer.ggml.pre", STRING, "default")
    w.add_array("tokenizer.ggml.tokens", STRING, [sp.id_to_piece(i) for i in range(n)])
    w.add_array("tokenizer.ggml.scores", F32, [sp.get_score(i) for i in range(n)])
    w.add_array("tokenizer.ggml.token_type", I32, types)
    w.add("tokenizer.ggml.bos_token_id", U32, tok.bos)
    w.add("tokenizer.ggml.eos_token_id", U32, tok.im_end)  # a reply ends with <|im_end|>
    w.add("tokenizer.ggml.unknown_token_id", U32, sp.unk_id())
    w.add("tokenizer.ggml.add_bos_token", BOOL, True)
    w.add("tokenizer.ggml.add_eos_token", BOOL, False)
    w.add("tokenizer.ggml.add_space_prefix", BOOL, True)
    w.add("tokenizer.chat_template", STRING, CHAT_TEMPLATE)


def half(t):
    """The F16 value of a weight, back as a float tensor (what the GGUF file holds)."""
    return t.detach().to(torch.float16).to(torch.float32)


def llama_tensors(model):
    """(name, tensor, ggml type) in the order written; weights are rounded in place where stored as F16."""
    sd = model.state_dict()
    out = [("token_embd.weight", "embed.weight", GGML_F16), ("output_norm.weight", "norm.weight", GGML_F32)]
    for i in range(model.c.layers):
        p = f"blocks.{i}."
        out += [(f"blk.{i}.attn_norm.weight", p + "attn_norm.weight", GGML_F32),
                (f"blk.{i}.attn_q.weight", p + "attn.wq.weight", GGML_F16),
                (f"blk.{i}.attn_k.weight", p + "attn.wk.weight", GGML_F16),
                (f"blk.{i}.attn_v.weight", p + "attn.wv.weight", GGML_F16),
                (f"blk.{i}.attn_output.weight", p + "attn.wo.weight", GGML_F16),
                (f"blk.{i}.ffn_norm.weight", p + "ffn_norm.weight", GGML_F32),
                (f"blk.{i}.ffn_gate.weight", p + "w_gate.weight", GGML_F16),
                (f"blk.{i}.ffn_up.weight", p + "w_up.weight", GGML_F16),
                (f"blk.{i}.ffn_down.weight", p + "w_down.weight", GGML_F16)]
    return [(g, sd[t], ty) for g, t, ty in out]


def mamba_tensors(model):
    sd = model.state_dict()
    out = [("token_embd.weight", sd["embed.weight"], GGML_F16), ("output_norm.weight", sd["norm.weight"], GGML_F32)]
    for i in range(model.c.layers):
        p = f"blocks.{i}."
        out += [(f"blk.{i}.attn_norm.weight", sd[p + "norm.weight"], GGML_F32),
                (f"blk.{i}.ssm_in.weight", sd[p + "in_proj.weight"], GGML_F16),
                (f"blk.{i}.ssm_conv1d.weight", sd[p + "conv.weight"].squeeze(1), GGML_F32),  # ggml [conv, inner]
                (f"blk.{i}.ssm_conv1d.bias", sd[p + "conv.bias"], GGML_F32),
                (f"blk.{i}.ssm_x.weight", sd[p + "x_proj.weight"], GGML_F16),
                (f"blk.{i}.ssm_dt.weight", sd[p + "dt_proj.weight"], GGML_F16),
                (f"blk.{i}.ssm_dt.bias", sd[p + "dt_proj.bias"], GGML_F32),
                (f"blk.{i}.ssm_a", -torch.exp(sd[p + "A_log"]), GGML_F32),
                (f"blk.{i}.ssm_d", sd[p + "D"], GGML_F32),
                (f"blk.{i}.ssm_out.weight", sd[p + "out_proj.weight"], GGML_F16)]
    return out


def round_to_stored(model, arch):
    """Replaces every F16-stored weight by its F16 value, so PyTorch computes with what the file holds."""
    names = {"llama": ["embed.weight", "attn.wq", "attn.wk", "attn.wv", "attn.wo", "w_gate", "w_up", "w_down"],
             "mamba": ["embed.weight", "in_proj", "x_proj", "dt_proj.weight", "out_proj"]}[arch]
    with torch.no_grad():
        for n, p in model.named_parameters():
            if any(k in n for k in names) and p.dim() == 2:
                p.copy_(half(p))


def write_gguf(path, arch, model, tok):
    c = model.c
    w = GGUFWriter()
    w.add("general.architecture", STRING, arch)
    w.add("general.type", STRING, "model")
    w.add("general.name", STRING, NAMES[arch])
    params = sum(t.numel() for _, t, _ in (llama_tensors(model) if arch == "llama" else mamba_tensors(model)))
    w.add("general.description", STRING, DESCRIPTION.format(what=WHAT[arch], params=f"{params / 1e6:.1f} million"))
    w.add("general.license", STRING, "MIT")
    w.add("general.file_type", U32, 1)  # MOSTLY_F16
    a = arch + "."
    w.add(a + "context_length", U32, c.context)
    w.add(a + "embedding_length", U32, c.dim)
    w.add(a + "block_count", U32, c.layers)
    w.add(a + "vocab_size", U32, c.vocab)
    w.add(a + "attention.layer_norm_rms_epsilon", F32, c.eps)
    if arch == "llama":
        w.add(a + "feed_forward_length", U32, c.ff)
        w.add(a + "attention.head_count", U32, c.heads)
        w.add(a + "attention.head_count_kv", U32, c.kv_heads)
        w.add(a + "rope.dimension_count", U32, c.dim // c.heads)
        w.add(a + "rope.freq_base", F32, c.rope_base)
        tensors = llama_tensors(model)
    else:
        w.add(a + "feed_forward_length", U32, 0)
        w.add(a + "attention.head_count", U32, 0)
        w.add(a + "ssm.conv_kernel", U32, c.conv)
        w.add(a + "ssm.inner_size", U32, c.inner)
        w.add(a + "ssm.state_size", U32, c.state)
        w.add(a + "ssm.time_step_rank", U32, c.dt_rank)
        w.add(a + "ssm.dt_b_c_rms", BOOL, False)
        tensors = mamba_tensors(model)
    tokenizer_metadata(w, tok)
    for name, t, ty in tensors:
        w.add_tensor(name, t.detach().float().numpy(), ty)
    w.write(path)


def prompts(out, tok, n):
    """n held-out questions spread over the task kinds, plus one two-turn conversation."""
    rows = [json.loads(l) for l in open(f"{out}/heldout.jsonl")]
    kinds = sorted({r["kind"] for r in rows})
    picked = []
    for i in range(n - 1):
        kind = kinds[i % len(kinds)]
        picked.append([r for r in rows if r["kind"] == kind][i // len(kinds)])
    texts = [(r["kind"], f"<|im_start|>user\n{r['question']}<|im_end|>\n<|im_start|>assistant\n") for r in picked]
    a, b = rows[0], rows[-1]
    texts.append(("two-turn", f"<|im_start|>user\n{a['question']}<|im_end|>\n<|im_start|>assistant\n{a['answer']}"
                  f"<|im_end|>\n<|im_start|>user\n{b['question']}<|im_end|>\n<|im_start|>assistant\n"))
    return texts


def oracle(model, tok, texts, greedy_n=32):
    model = model.double().eval()
    cases = []
    with torch.no_grad():
        for kind, text in texts:
            ids = tok.encode(text)
            logits = model(torch.tensor([ids]))[0]
            top = torch.topk(logits, 20, dim=-1)
            seq = list(ids)
            greedy, margins = [], []
            for _ in range(greedy_n):
                last = model(torch.tensor([seq]))[0, -1]
                t2 = torch.topk(last, 2)
                greedy.append(int(t2.indices[0]))
                margins.append(float(t2.values[0] - t2.values[1]))
                seq.append(greedy[-1])
            cases.append({
                "kind": kind, "prompt": text, "tokens": ids,
                "last_logits": [round(float(v), 6) for v in logits[-1]],
                "top_ids": top.indices.tolist(),
                "top_logits": [[round(float(v), 6) for v in row] for row in top.values],
                "greedy": greedy, "greedy_text": tok.decode(greedy),
                "greedy_min_margin": round(min(margins), 6),
            })
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("arch", choices=["llama", "mamba"])
    ap.add_argument("gguf")
    ap.add_argument("oracle")
    ap.add_argument("--prompts", type=int, default=12)
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = ChatTokenizer(f"{args.out}/tokenizer.model")
    ck = torch.load(f"{args.out}/{args.arch}.pt")
    model = build(args.arch, ck["config"])
    model.load_state_dict(ck["state"])
    round_to_stored(model, args.arch)
    write_gguf(args.gguf, args.arch, model, tok)
    cases = oracle(model, tok, prompts(args.out, tok, args.prompts))
    doc = {"model": args.gguf.split("/")[-1], "architecture": args.arch, "trained_steps": ck["steps"],
           "final_answer_loss": round(ck["loss"], 4),
           "note": "float64 PyTorch forward of the stored (F16-rounded) weights; tokens include BOS", "cases": cases}
    with open(args.oracle, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    for c in cases:
        print(f"{c['kind']:>10} margin {c['greedy_min_margin']:.4f}  {c['greedy_text'][:70]!r}")


if __name__ == "__main__":
    main()
