#!/usr/bin/python3
"""Exact-match accuracy of a demo model's greedy answers, per task kind.

  evaluate.py OUT_DIR llama|mamba [--seed 2002] [--per-kind 50]

Questions come from make_corpus.py's generators with a seed the training set
did not use (the question/answer spaces are small, so many questions also
occur in training: this measures what a user gets, not generalisation). The
model runs with its F16-rounded weights, exactly what the GGUF file holds
(tests/demo checks that Cairn's engine reproduces this PyTorch forward pass).
An answer is correct when the greedy reply up to <|im_end|> equals the
expected answer exactly.
"""
import argparse
import random

import torch

from chatml import ChatTokenizer
from export_gguf import round_to_stored
from make_corpus import KINDS, example
from models import build


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("arch", choices=["llama", "mamba"])
    ap.add_argument("--seed", type=int, default=2002)
    ap.add_argument("--per-kind", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--show", type=int, default=2, help="wrong answers to print per kind")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tok = ChatTokenizer(f"{args.out}/tokenizer.model")
    ck = torch.load(f"{args.out}/{args.arch}.pt")
    model = build(args.arch, ck["config"])
    model.load_state_dict(ck["state"])
    round_to_stored(model, args.arch)
    model.eval()
    rng = random.Random(args.seed)
    total_ok = total = 0
    with torch.no_grad():
        for kind in KINDS:
            ok = 0
            shown = 0
            for _ in range(args.per_kind):
                _, q, a = example(rng, kind)
                seq = tok.encode(f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n")
                reply = []
                for _ in range(64):
                    nxt = int(model(torch.tensor([seq]))[0, -1].argmax())
                    if nxt in (tok.im_end, tok.eos):
                        break
                    reply.append(nxt)
                    seq.append(nxt)
                got = tok.sp.decode(reply)
                if got == a:
                    ok += 1
                elif shown < args.show:
                    shown += 1
                    print(f"  wrong ({kind}): {q!r} -> {got!r} (expected {a!r})")
            print(f"{kind:>11}: {ok}/{args.per_kind} = {100.0 * ok / args.per_kind:.0f} %", flush=True)
            total_ok += ok
            total += args.per_kind
    print(f"{'all':>11}: {total_ok}/{total} = {100.0 * total_ok / total:.0f} %")


if __name__ == "__main__":
    main()
