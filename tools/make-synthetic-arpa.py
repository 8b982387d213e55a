#!/usr/bin/env python3
"""make-synthetic-arpa.py — a large, valid ARPA model from plain text, for speed tests where the real
model cannot travel (the GPU machine has no ../shared; 64 MiB carry limit).

Every n-gram of orders 1..N of the text (lines wrapped in <s> </s>) is kept, so every context and
every suffix is present; probabilities are maximum-likelihood log10 (count / context count, the
unigrams over all tokens) and backoffs log10(types following the context / (types + tokens)), so the
numbers are plausible but not a smoothed model: use it for speed, never for quality.

    python3 tools/make-synthetic-arpa.py --order 5 --lines 250000 < text > synth.arpa
    xz -dc sample.en.xz | python3 tools/make-synthetic-arpa.py --skip 250000 --lines 50000 --text-only

--skip drops the first lines (held-out text for queries: the same source, unseen n-grams);
--text-only copies the selected lines instead of counting (the query text).
"""
import argparse
import math
import sys
from collections import Counter, defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--order", type=int, default=5)
    ap.add_argument("--lines", type=int, default=0, help="lines to use (0: all)")
    ap.add_argument("--skip", type=int, default=0, help="lines to skip first")
    ap.add_argument("--text-only", action="store_true", help="copy the selected lines, no model")
    a = ap.parse_args()
    if not 2 <= a.order <= 6:
        sys.exit("make-synthetic-arpa.py: --order must be 2..6")
    sel = []
    for i, line in enumerate(sys.stdin):
        if i < a.skip:
            continue
        if a.lines and len(sel) >= a.lines:
            break
        sel.append(line.split())
    if a.text_only:
        out = sys.stdout
        for ws in sel:
            out.write(" ".join(ws) + "\n")
        return
    N = a.order
    counts = [None] + [Counter() for _ in range(N)]
    for ws in sel:
        s = ["<s>"] + ws + ["</s>"]
        for n in range(1, N + 1):
            c = counts[n]
            for i in range(len(s) - n + 1):
                c[tuple(s[i:i + n])] += 1
    counts[1][("<unk>",)] = 0
    total = sum(counts[1].values())
    # types following each context (for the backoffs)
    follow = [None] + [defaultdict(int) for _ in range(N)]
    for n in range(2, N + 1):
        f = follow[n - 1]
        for g in counts[n]:
            f[g[:-1]] += 1
    out = sys.stdout
    out.write("\\data\\\n")
    for n in range(1, N + 1):
        out.write("ngram %d=%d\n" % (n, len(counts[n])))
    for n in range(1, N + 1):
        out.write("\n\\%d-grams:\n" % n)
        c, f = counts[n], follow[n]
        ctx = counts[n - 1] if n > 1 else None
        for g, k in c.items():
            if g == ("<s>",):
                p = -99.0
            elif g == ("<unk>",):
                p = -7.0
            else:
                p = math.log10(k / (ctx[g[:-1]] if ctx is not None else total))
            line = "%.6f\t%s" % (p, " ".join(g))
            if n < N:
                t = f.get(g, 0)
                line += "\t%.6f" % (math.log10(t / (t + c[g])) if t else 0.0)
            out.write(line + "\n")
    out.write("\n\\end\\\n")


if __name__ == "__main__":
    main()
