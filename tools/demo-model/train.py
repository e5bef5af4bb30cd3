#!/usr/bin/python3
"""Trains one demo model on OUT_DIR/train.jsonl.

  nice -n 5 train.py OUT_DIR llama|mamba [--steps N] [--budget SECONDS] [--threads T]

Loss on the assistant tokens only (the answers and their <|im_end|>), AdamW,
linear warm-up then cosine decay over --steps. Deterministic for a given
--steps and --threads (fixed seeds); --budget is a hard wall-time stop in case
the machine is slower than planned: the log then says at which step it stopped.
Writes OUT_DIR/ARCH.pt (weights + config) and OUT_DIR/ARCH.log.
"""
import argparse
import json
import math
import time

import torch

from chatml import ChatTokenizer
from models import build, config_dict

CONFIGS = {
    "llama": dict(dim=128, layers=4, heads=4, kv_heads=2, ff=384),
    "mamba": dict(dim=128, layers=3, inner=256, state=16, conv=4, dt_rank=8),
}


def load_stream(out, tok):
    ids, mask = [], []
    with open(f"{out}/train.jsonl") as f:
        for line in f:
            i, m = tok.dialogue(json.loads(line)["turns"])
            ids += i
            mask += m
    return torch.tensor(ids, dtype=torch.long), torch.tensor(mask, dtype=torch.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("arch", choices=list(CONFIGS))
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--budget", type=float, default=720.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=96)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    tok = ChatTokenizer(f"{args.out}/tokenizer.model")
    ids, mask = load_stream(args.out, tok)
    cfg = dict(CONFIGS[args.arch], vocab=tok.sp.get_piece_size())
    model = build(args.arch, cfg, args.seed)
    nparams = sum(p.numel() for p in model.parameters())
    log = open(f"{args.out}/{args.arch}.log", "w")

    def say(s):
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    say(f"{args.arch}: {nparams} parameters, config {config_dict(model)}, stream {len(ids)} tokens "
        f"({int(mask.sum())} answer tokens), steps {args.steps}, batch {args.batch}x{args.seq}, "
        f"threads {args.threads}")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "A_log" not in n]
    other = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "A_log" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": other, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98))
    gen = torch.Generator().manual_seed(args.seed)
    warm = max(1, args.steps // 20)
    start = time.time()
    avg = None
    step = 0
    for step in range(1, args.steps + 1):
        lr = args.lr * (step / warm if step <= warm else 0.5 * (1 + math.cos(math.pi * (step - warm) / (args.steps - warm))))
        lr = max(lr, args.lr * 0.02)
        for g in opt.param_groups:
            g["lr"] = lr
        starts = torch.randint(0, len(ids) - args.seq - 1, (args.batch,), generator=gen)
        x = torch.stack([ids[s:s + args.seq] for s in starts])
        y = torch.stack([ids[s + 1:s + args.seq + 1] for s in starts])
        m = torch.stack([mask[s + 1:s + args.seq + 1] for s in starts])
        # logits only where the loss is (answer tokens): the output matrix is much of the compute
        sel = m.reshape(-1) > 0
        h = model.hidden(x).reshape(-1, model.c.dim)[sel]
        loss = torch.nn.functional.cross_entropy(model.head(h), y.reshape(-1)[sel])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        avg = loss.item() if avg is None else 0.95 * avg + 0.05 * loss.item()
        elapsed = time.time() - start
        if step % 25 == 0 or step == 1:
            say(f"step {step} loss {loss.item():.4f} avg {avg:.4f} lr {lr:.2e} elapsed {elapsed:.0f}s")
        if elapsed > args.budget:
            say(f"time budget {args.budget:.0f}s reached at step {step} of {args.steps}")
            break
    say(f"done: {step} steps, final avg answer loss {avg:.4f}, {time.time() - start:.0f}s")
    torch.save({"arch": args.arch, "config": config_dict(model), "state": model.state_dict(), "steps": step,
                "loss": avg}, f"{args.out}/{args.arch}.pt")


if __name__ == "__main__":
    main()
