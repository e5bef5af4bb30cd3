"""The two demo architectures in plain PyTorch, written so their weights map
one to one onto llama.cpp's `llama` and `mamba` GGUF tensors.

Transformer: RMSNorm, RoPE on adjacent pairs (2i, 2i+1) of each head — the
layout llama.cpp uses for `llama` after its converter's Q/K permutation, so we
train in it directly and export Q/K unpermuted —, GQA, SwiGLU, tied embeddings.

Mamba-1: the math of the reference README ("Notes for implementers"): causal
depthwise conv with taps oldest first, x_proj -> [dt_low, B, C], softplus
(threshold 20) of dt_proj, selective scan with A = -exp(A_log), D skip,
output = out_proj(y * SiLU(z)), pre-norm residual blocks, tied embeddings.
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


@dataclass
class LlamaConfig:
    vocab: int = 2048
    dim: int = 256
    layers: int = 4
    heads: int = 8
    kv_heads: int = 4
    ff: int = 640
    rope_base: float = 10000.0
    eps: float = 1e-5
    context: int = 512


def rope_tables(head_dim, positions, base, dtype):
    i = torch.arange(0, head_dim // 2, dtype=torch.float64)
    inv = base ** (-2.0 * i / head_dim)
    ang = positions.to(torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).to(dtype), torch.sin(ang).to(dtype)


def apply_rope(x, cos, sin):
    # x: (B, H, T, D); rotates pairs (2i, 2i+1)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        hd = c.dim // c.heads
        self.wq = nn.Linear(c.dim, c.heads * hd, bias=False)
        self.wk = nn.Linear(c.dim, c.kv_heads * hd, bias=False)
        self.wv = nn.Linear(c.dim, c.kv_heads * hd, bias=False)
        self.wo = nn.Linear(c.heads * hd, c.dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        c = self.c
        hd = c.dim // c.heads
        q = self.wq(x).view(B, T, c.heads, hd).transpose(1, 2)
        k = self.wk(x).view(B, T, c.kv_heads, hd).transpose(1, 2)
        v = self.wv(x).view(B, T, c.kv_heads, hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        rep = c.heads // c.kv_heads  # query head h reads KV head h // rep
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, c.heads * hd)
        return self.wo(y)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attn_norm = RMSNorm(c.dim, c.eps)
        self.attn = Attention(c)
        self.ffn_norm = RMSNorm(c.dim, c.eps)
        self.w_gate = nn.Linear(c.dim, c.ff, bias=False)
        self.w_up = nn.Linear(c.dim, c.ff, bias=False)
        self.w_down = nn.Linear(c.ff, c.dim, bias=False)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Llama(nn.Module):
    def __init__(self, c: LlamaConfig):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.dim)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.dim, c.eps)
        nn.init.normal_(self.embed.weight, std=0.02)
        for n, p in self.named_parameters():
            if n.endswith("wo.weight") or n.endswith("w_down.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * c.layers))

    def hidden(self, ids):
        T = ids.shape[1]
        cos, sin = rope_tables(self.c.dim // self.c.heads, torch.arange(T), self.c.rope_base, self.embed.weight.dtype)
        x = self.embed(ids)
        for b in self.blocks:
            x = b(x, cos, sin)
        return x

    def head(self, x):
        return self.norm(x) @ self.embed.weight.t()

    def forward(self, ids):
        return self.head(self.hidden(ids))


@dataclass
class MambaConfig:
    vocab: int = 2048
    dim: int = 256
    layers: int = 4
    inner: int = 512
    state: int = 16
    conv: int = 4
    dt_rank: int = 16
    eps: float = 1e-5
    context: int = 512


class MambaBlock(nn.Module):
    def __init__(self, c: MambaConfig, gen):
        super().__init__()
        self.c = c
        self.norm = RMSNorm(c.dim, c.eps)
        self.in_proj = nn.Linear(c.dim, 2 * c.inner, bias=False)
        self.conv = nn.Conv1d(c.inner, c.inner, c.conv, groups=c.inner, padding=c.conv - 1, bias=True)
        self.x_proj = nn.Linear(c.inner, c.dt_rank + 2 * c.state, bias=False)
        self.dt_proj = nn.Linear(c.dt_rank, c.inner, bias=True)
        self.out_proj = nn.Linear(c.inner, c.dim, bias=False)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, c.state + 1, dtype=torch.float32)).repeat(c.inner, 1))
        self.D = nn.Parameter(torch.ones(c.inner))
        # dt bias = inverse softplus of dt, dt log-uniform in [1e-3, 1e-1] (Mamba's init)
        dt = torch.exp(torch.rand(c.inner, generator=gen) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
            bound = c.dt_rank ** -0.5
            self.dt_proj.weight.copy_((torch.rand(c.inner, c.dt_rank, generator=gen) * 2 - 1) * bound)

    def forward(self, x):
        c = self.c
        B, T, _ = x.shape
        xz = self.in_proj(self.norm(x))
        u, z = xz[..., :c.inner], xz[..., c.inner:]
        # causal depthwise conv: tap k multiplies x[t - (conv-1) + k] (oldest first), as shifted
        # sums (PyTorch's grouped Conv1d backward is very slow on CPU)
        pad = F.pad(u, (0, 0, c.conv - 1, 0))
        w = self.conv.weight[:, 0, :]                                    # (inner, conv)
        u = F.silu(sum(pad[:, k:k + T] * w[:, k] for k in range(c.conv)) + self.conv.bias)
        dbc = self.x_proj(u)
        dt_low, Bm, Cm = dbc.split([c.dt_rank, c.state, c.state], dim=-1)
        dt = F.softplus(self.dt_proj(dt_low), threshold=20.0)            # (B, T, inner)
        A = -torch.exp(self.A_log)                                       # (inner, state)
        dA = torch.exp(dt[..., None] * A)                                # (B, T, inner, state)
        dBu = dt[..., None] * Bm[:, :, None, :] * u[..., None]          # (B, T, inner, state)
        h = torch.zeros(B, c.inner, c.state, dtype=x.dtype)
        hs = []
        # unbind, not dA[:, t]: the backward of T selects would add T full-size gradients
        for a_t, b_t in zip(dA.unbind(1), dBu.unbind(1)):
            h = a_t * h + b_t
            hs.append(h)
        hs = torch.stack(hs, dim=1)
        y = (hs * Cm[:, :, None, :]).sum(-1) + self.D * u
        return x + self.out_proj(y * F.silu(z))


class Mamba(nn.Module):
    def __init__(self, c: MambaConfig, seed=0):
        super().__init__()
        self.c = c
        gen = torch.Generator().manual_seed(seed + 1)
        self.embed = nn.Embedding(c.vocab, c.dim)
        self.blocks = nn.ModuleList(MambaBlock(c, gen) for _ in range(c.layers))
        self.norm = RMSNorm(c.dim, c.eps)
        nn.init.normal_(self.embed.weight, std=0.02)
        for b in self.blocks:
            nn.init.normal_(b.out_proj.weight, std=0.02 / math.sqrt(2 * c.layers))

    def hidden(self, ids):
        x = self.embed(ids)
        for b in self.blocks:
            x = b(x)
        return x

    def head(self, x):
        return self.norm(x) @ self.embed.weight.t()

    def forward(self, ids):
        return self.head(self.hidden(ids))


def build(arch, cfg: dict, seed=0):
    if arch == "llama":
        return Llama(LlamaConfig(**cfg))
    if arch == "mamba":
        return Mamba(MambaConfig(**cfg), seed)
    raise ValueError(arch)


def config_dict(model):
    return asdict(model.c)
