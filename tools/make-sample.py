#!/usr/bin/env python3
"""Cuts the small sample model shipped in examples/sample from the shared bible model.

Keeps the phrase-table and reordering-table lines whose source phrase occurs in the sample
sentences, so the README's commands run on a fresh clone in seconds.
Usage: tools/make-sample.py SHARED_DIR OUT_DIR N_SENTENCES
"""
import gzip
import os
import sys


def sub_phrases(lines, max_len=5):
    keep = set()
    for line in lines:
        toks = line.split()
        for i in range(len(toks)):
            for n in range(1, max_len + 1):
                if i + n <= len(toks):
                    keep.add(" ".join(toks[i:i + n]))
    return keep


def filter_table(src_path, dst_path, keep):
    kept = 0
    with gzip.open(src_path, "rt", encoding="utf-8") as f, \
            gzip.open(dst_path, "wt", encoding="utf-8", compresslevel=9) as out:
        for line in f:
            if line.split(" ||| ", 1)[0] in keep:
                out.write(line)
                kept += 1
    return kept


def main():
    shared, out_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = os.path.join(shared, "models", "bible-es-en")
    with open(os.path.join(shared, "data", "bible", "test-a.es"), encoding="utf-8") as f:
        sentences = [next(f) for _ in range(n)]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "sample.es"), "w", encoding="utf-8") as f:
        f.writelines(sentences)
    keep = sub_phrases(sentences)
    for name in ("phrase-table.gz", "reordering-table.wbe-msd-bidirectional-fe.gz"):
        kept = filter_table(os.path.join(model, name), os.path.join(out_dir, name), keep)
        print(f"{name}: {kept} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
