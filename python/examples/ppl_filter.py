#!/usr/bin/env python3
"""Perplexity filter over a JSONL file, the CCNet pattern: each document's perplexity under an
n-gram LM is 10 ** (-sum of its lines' log10 scores / sum of their words + 1), documents above a
threshold are dropped. One score_batch call scores a whole chunk of documents' lines in C (the
GIL released, --threads CPUs).

  ppl_filter.py --model lm.glm --max-ppl 1000 [--field text] [--threads 2] < in.jsonl > out.jsonl

Every kept document is written unchanged with a "perplexity" field added; the counts go to stderr.
"""
import argparse
import json
import sys

import fastsmt.kenlm as kenlm


def chunks(stream, size):
    chunk = []
    for line in stream:
        if line.strip():
            chunk.append(json.loads(line))
            if len(chunk) == size:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--max-ppl", type=float, required=True)
    ap.add_argument("--field", default="text")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=10000, help="documents per score_batch call")
    a = ap.parse_args()
    model = kenlm.Model(a.model)
    kept = total = 0
    for docs in chunks(sys.stdin, a.chunk):
        lines, owner = [], []
        for i, doc in enumerate(docs):
            for line in doc[a.field].split("\n"):
                lines.append(line)
                owner.append(i)
        scores = model.score_batch(lines, threads=a.threads)
        log10 = [0.0] * len(docs)
        length = [0] * len(docs)
        for i, line, score in zip(owner, lines, scores):
            log10[i] += score
            length[i] += len(line.split()) + 1  # the words and </s>, as KenLM's perplexity
        for doc, lp, n in zip(docs, log10, length):
            total += 1
            ppl = 10.0 ** (-lp / n)
            if ppl <= a.max_ppl:
                doc["perplexity"] = round(ppl, 1)
                sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
                kept += 1
    print("ppl_filter: kept %d of %d documents" % (kept, total), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
