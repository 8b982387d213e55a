#!/usr/bin/env python3
"""Cuts the small sample model shipped in examples/sample from the shared bible model.

Keeps the phrase-table and reordering-table lines whose source phrase occurs in the sample
sentences, and the n-grams of the 3-gram LM whose words all occur in the 20 best translations of each
kept source phrase
(removing every n-gram that contains a removed word keeps the ARPA file valid: the context and the
suffixes of a kept n-gram are kept too), with recomputed counts; then writes a moses.ini with the
shared model's tuned weights. The README's commands run on a fresh clone in seconds.
Usage: tools/make-sample.py SHARED_DIR OUT_DIR N_SENTENCES
"""
import gzip
import math
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


def target_vocab(pt_path, ini_path, limit=20):
    """Target words of the `limit` best translations of each source phrase, ranked by the tuned
    weights of the translation model scores (the LM is what we are cutting, so it is left out)."""
    weights = None
    with open(ini_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("TranslationModel0="):
                weights = [float(x) for x in line.split()[1:]]
    groups = {}
    with gzip.open(pt_path, "rt", encoding="utf-8") as f:
        for line in f:
            src, tgt, scores = line.split(" ||| ")[:3]
            s = sum(w * max(math.log(float(p)), -100.0) if float(p) > 0 else -100.0 * w
                    for w, p in zip(weights, scores.split()))
            groups.setdefault(src, []).append((-s, tgt))
    vocab = set()
    for targets in groups.values():
        targets.sort()
        for _, tgt in targets[:limit]:
            vocab.update(tgt.split())
    return vocab


def filter_arpa(src_path, dst_path, vocab):
    keep = vocab | {"<s>", "</s>", "<unk>"}
    sections, order, cur = {}, 0, None
    with gzip.open(src_path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\\") and line.endswith("-grams:"):
                cur = int(line[1:line.index("-")])
                sections[cur] = []
                order = max(order, cur)
            elif line == "\\end\\":
                cur = None
            elif cur and line.strip():
                fields = line.split()
                if all(w in keep for w in fields[1:1 + cur]):
                    sections[cur].append(line)
    with gzip.open(dst_path, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("\n\\data\\\n")
        for n in range(1, order + 1):
            out.write(f"ngram {n}={len(sections[n])}\n")
        for n in range(1, order + 1):
            out.write(f"\n\\{n}-grams:\n")
            out.write("\n".join(sections[n]) + "\n")
        out.write("\n\\end\\\n")
    return [len(sections[n]) for n in range(1, order + 1)]


def write_ini(shared_ini, out_path):
    """The shared tuned moses.ini, with the sample's file names."""
    with open(shared_ini, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("path=lm.5.arpa.gz order=5", "path=lm.3.arpa.gz order=3")
    lines = [l for l in text.splitlines() if not l.startswith("# Tuned") and
             not l.startswith("# Paths")]
    header = ["# The sample model of examples/sample (tools/make-sample.py): the shared bible model's",
              "# tables cut to the sample sentences, its 3-gram LM cut to their target words, and the",
              "# tuned weights of the shared 5-gram system. Paths are relative to this file."]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(header + lines) + "\n")


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
    vocab = target_vocab(os.path.join(out_dir, "phrase-table.gz"), os.path.join(model, "moses.ini"))
    counts = filter_arpa(os.path.join(model, "lm.3.arpa.gz"), os.path.join(out_dir, "lm.3.arpa.gz"),
                         vocab)
    print(f"lm.3.arpa.gz: {counts} n-grams", file=sys.stderr)
    write_ini(os.path.join(model, "moses.ini"), os.path.join(out_dir, "moses.ini"))


if __name__ == "__main__":
    main()
