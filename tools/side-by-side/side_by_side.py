#!/usr/bin/env python3
"""Cairn beside llama.cpp on the same GGUF files, the way docs/PERFORMANCE.md
measures it: each program runs right after its file was dropped from the page
cache and read again (so both start from the same state), and a plain 2-thread
read loop (`cairn-cli bench --read-loop`) labels the minutes each run met,
since a shared host's memory speed drifts by up to 2x within seconds.

  side_by_side.py pass  --llama-bench B [options] MODEL.gguf ...  # pp512 + tg128, one run of each program
                                                                  # (llama.cpp's between two read loops)
  side_by_side.py pairs --llama-bench B [options] MODEL.gguf ...  # tg128 pairs, order alternating
  side_by_side.py depth --llama-bench B [options] MODEL.gguf ...  # pp512 + tg128 after 4096 tokens, fa 0 and 1

llama.cpp is built outside the repository (docs/PERFORMANCE.md says which
commit); nothing here downloads or builds it. Needs an idle machine: no
build, test or other benchmark beside it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def reread(path):
    """Drop the file from the page cache, then read it whole again."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        while os.read(fd, 1 << 24):
            pass
    finally:
        os.close(fd)


def run_json(cmd):
    """The command's JSON report: its whole stdout, or else its last line."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        return json.loads(out.strip().splitlines()[-1])


def read_loop(a):
    """Best pass of a 512 MiB 2-thread read loop, GB/s."""
    return run_json([a.cairn, "bench", "--read-loop", "512", "-t", str(a.threads), "-r", "5", "--json"])["read_loop_gbs"]


def cairn_bench(a, model, extra):
    cmd = [a.cairn, "bench", "-m", model, "-t", str(a.threads), "--json"] + extra
    if a.kernel_cache:
        cmd += ["--kernel-cache", a.kernel_cache]
    return run_json(cmd)


def llama_bench(a, model, extra):
    """llama-bench's tokens/s: {"pp": prompt, "tg": generation} (whichever it ran)."""
    rows = run_json([a.llama_bench, "-m", model, "-t", str(a.threads), "-o", "json"] + extra)
    return {("pp" if r["n_prompt"] > 0 else "tg"): r["avg_ts"] for r in rows}


def name(model):
    return os.path.basename(model).removesuffix(".gguf")


def do_pass(a):
    for m in a.models:
        reread(m)
        c = cairn_bench(a, m, ["-p", "512", "-n", "128", "-r", str(a.reps), "--read-loop", "1024"])
        reread(m)
        # llama.cpp's run between two read loops, so a ratio that two
        # different minutes made shows as such.
        before = read_loop(a)
        lb = llama_bench(a, m, ["-p", "512", "-n", "128", "-r", str(a.reps)])
        after = read_loop(a)
        lpp, ltg = lb["pp"], lb["tg"]
        adj = c["read_loop_adjacent_gbs"]
        print(f"{name(m):20s} pp512 {c['pp_tps']:7.1f} / {lpp:7.1f} {c['pp_tps'] / lpp:5.2f}x   "
              f"tg128 {c['tg_tps']:6.2f} / {ltg:6.2f} {c['tg_tps'] / ltg:5.2f}x   "
              f"decode {c['decode_gbs']:5.1f} GB/s, {c['decode_share_adjacent']:.2f} of the read loop right after "
              f"each run ({min(adj):.0f}-{max(adj):.0f} GB/s); llama.cpp's run between read loops of "
              f"{before:.0f} and {after:.0f} GB/s", flush=True)


def do_pairs(a):
    for m in a.models:
        def bracketed(tg):
            """tg() after the file was re-read, with the read loop before and after it."""
            reread(m)
            before = read_loop(a)
            return tg(), before, read_loop(a)

        def cairn():
            return bracketed(lambda: cairn_bench(a, m, ["-p", "16", "-n", "128", "-r", str(a.reps)])["tg_tps"])

        def llama():
            return bracketed(lambda: llama_bench(a, m, ["-p", "0", "-n", "128", "-r", str(a.reps)])["tg"])

        ratios = []
        for i in range(a.pairs):
            if i % 2 == 0:
                c, l = cairn(), llama()
            else:
                l, c = llama(), cairn()
            ratios.append(c[0] / l[0])
            print(f"{name(m)} pair {i + 1}: Cairn {c[0]:.2f} t/s (read loop {c[1]:.0f}-{c[2]:.0f}) / llama.cpp "
                  f"{l[0]:.2f} (read loop {l[1]:.0f}-{l[2]:.0f}) = {ratios[-1]:.2f}x", flush=True)
        print(f"{name(m)}: {len(ratios)} pairs, median {statistics.median(ratios):.2f}x, "
              f"geometric mean {statistics.geometric_mean(ratios):.2f}x, below 1.0 in {sum(r < 1 for r in ratios)}")


def do_depth(a):
    d = str(a.depth)
    for m in a.models:
        reread(m)
        before = read_loop(a)
        c = cairn_bench(a, m, ["-p", "512", "-n", "128", "-d", d, "-r", "1"])
        print(f"{name(m):20s} Cairn      pp512 {c['pp_tps']:7.2f}  tg128 {c['tg_tps']:6.2f}  at depth {d} "
              f"(read loop before {before:.0f} GB/s)", flush=True)
        for fa in ("0", "1"):
            reread(m)
            before = read_loop(a)
            lb = llama_bench(a, m, ["-p", "512", "-n", "128", "-d", d, "-r", "1", "-fa", fa])
            lpp, ltg = lb["pp"], lb["tg"]
            print(f"{name(m):20s} llama fa {fa} pp512 {lpp:7.2f}  tg128 {ltg:6.2f}  ratios pp "
                  f"{c['pp_tps'] / lpp:.2f}x tg {c['tg_tps'] / ltg:.2f}x (read loop before {before:.0f} GB/s)",
                  flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["pass", "pairs", "depth"])
    p.add_argument("models", nargs="+", metavar="MODEL.gguf")
    p.add_argument("--llama-bench", required=True, help="llama.cpp's llama-bench binary")
    p.add_argument("--cairn", default=os.path.join(REPO, "build", "bin", "cairn-cli"))
    p.add_argument("--kernel-cache", help="Cairn's kernel calibration file (measured when missing)")
    p.add_argument("-t", "--threads", type=int, default=2)
    p.add_argument("-r", "--reps", type=int, default=2, help="repetitions per run (each program's median)")
    p.add_argument("--pairs", type=int, default=6, help="pairs per model (pairs mode)")
    p.add_argument("--depth", type=int, default=4096, help="tokens before the tests (depth mode)")
    a = p.parse_args()
    for exe in (a.cairn, a.llama_bench):
        if not os.access(exe, os.X_OK):
            sys.exit(f"side_by_side.py: {exe} is not an executable")
    {"pass": do_pass, "pairs": do_pairs, "depth": do_depth}[a.mode](a)


if __name__ == "__main__":
    main()
