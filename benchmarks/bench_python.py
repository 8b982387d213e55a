#!/usr/bin/env python3
"""bench_python.py — fastsmt.kenlm's speed from Python, one machine-readable line per measurement:
score() in a Python loop (what a script written for KenLM's module does), then score_batch with 1
and 2 threads (and any --threads), in sentences/s and tokens/s (words + </s>), with the ratio to
KenLM's module (--kenlm-sps: 250,000 sentences/s single thread on the mono sample with the mono
lm.5 probing binary, issue 13).

  PYTHONPATH=build/python python3 benchmarks/bench_python.py [--model M] [--text T] [--lines N]

Defaults (../shared, FASTSMT_SHARED): the mono lm.5, built once into /tmp/fastsmt-bench-mono.5.glm
with build/bin/glm (--glm), and the first 100,000 lines of the mono sample. Each figure is the
best of --repeat runs (the machine may be shared); cpu_seconds is the process's CPU time (all
threads), the steadier figure for one thread on a loaded machine. Every run checks that score_batch equals the
score loop, sentence by sentence.

--vs-kenlm DIR imports KenLM's own Python module (its "kenlm", found in DIR) beside fastsmt.kenlm
and measures, for each --model (several may be given: KenLM's binaries of every layout), the loops
KenLM users write with each module in the same process, taken in turns: score() per line,
list(full_scores()) per line and BaseScore word by word from BeginSentenceWrite; the best CPU
and the best wall time of --repeat turns each, their ratios KenLM's / fastsmt's (above 1: fastsmt
faster), and a check that both modules give the same scores.

--dask W adds fastsmt.dask.score_bag on a distributed LocalCluster of W worker processes (one
thread each) over the same sentences written to a file and read back by the workers as a bag of
4*W partitions (dask.bag.read_text with a block size: how a pipeline reads a corpus; a bag made
in this process with from_sequence costs distributed ~0.1 ms a sentence in graph handling alone),
the scores gathered back here; after one warm-up run that opens the model in each worker; wall
time only (the work runs in other processes), beside score_batch with W threads in this process.
Needs Debian's python3-dask and python3-distributed.
"""
import argparse
import lzma
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def shared(rel):
    root = os.environ.get("FASTSMT_SHARED") or os.path.join(ROOT, "..", "shared")
    return os.path.join(root, rel)


def read_lines(path, n):
    opener = lzma.open if path.endswith(".xz") else open
    out = []
    with opener(path, "rt", encoding="utf-8", newline="\n") as f:
        for line in f:
            out.append(line.rstrip("\n"))
            if len(out) == n:
                break
    return out


def best(fn, repeat):
    """The best wall time and the best CPU time (this process, all threads) of repeat runs: on a
    shared machine the CPU time of a one-thread run is the steadier figure."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        r = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus), r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", nargs="+",
                    help="a glm or KenLM binary or an ARPA file, or several (default: the mono lm.5)")
    ap.add_argument("--text", default=shared("data/mono/sample.en.xz"))
    ap.add_argument("--lines", type=int, default=100000)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--glm", default=os.path.join(ROOT, "build", "bin", "glm"),
                    help="the glm tool that builds the default model once")
    ap.add_argument("--vs-kenlm", metavar="DIR",
                    help="compare with KenLM's Python module (import kenlm from DIR) per --model")
    ap.add_argument("--dask", type=int, default=0, metavar="W",
                    help="also fastsmt.dask.score_bag on a LocalCluster of W workers")
    ap.add_argument("--kenlm-sps", type=float, default=250000.0,
                    help="KenLM's module: sentences/s of score() in a loop (issue 13's figure)")
    a = ap.parse_args()

    import fastsmt.kenlm as kenlm

    if a.vs_kenlm:
        return bench_vs_kenlm(a, kenlm)
    if a.model and len(a.model) > 1:
        print("bench_python: several --model only with --vs-kenlm", file=sys.stderr)
        return 2
    model_path = a.model[0] if a.model else None
    if not model_path:
        model_path = "/tmp/fastsmt-bench-mono.5.glm"
        if not os.path.exists(model_path):
            arpa = shared("models/mono/lm.5.arpa.xz")
            if not os.path.exists(arpa) or not os.access(a.glm, os.X_OK):
                print("bench_python: needs --model, or %s and the glm tool %s" % (arpa, a.glm),
                      file=sys.stderr)
                return 2
            t0 = time.perf_counter()
            subprocess.run([a.glm, "build", arpa, model_path], check=True)
            print("python_bench build model=%s seconds=%.2f" % (model_path, time.perf_counter() - t0))
    if not os.path.exists(a.text):
        print("bench_python: no text %s (--text)" % a.text, file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    model = kenlm.Model(model_path)
    load = time.perf_counter() - t0
    sentences = read_lines(a.text, a.lines)
    tokens = sum(len(s.encode("utf-8").split()) + 1 for s in sentences)
    n = len(sentences)
    print("python_bench load model=%s seconds=%.3f lines=%d tokens=%d"
          % (os.path.basename(model_path), load, n, tokens))

    score = model.score

    def loop():
        return [score(s) for s in sentences]

    secs, cpu, want = best(loop, a.repeat)
    sps = n / secs
    print("python_bench score_loop threads=1 sentences=%d tokens=%d seconds=%.3f cpu_seconds=%.3f "
          "sentences_per_s=%.0f tokens_per_s=%.0f sentences_per_cpu_s=%.0f vs_kenlm_module=%.2f "
          "vs_kenlm_module_cpu=%.2f" % (n, tokens, secs, cpu, sps, tokens / secs, n / cpu,
                                        sps / a.kenlm_sps, n / cpu / a.kenlm_sps))
    for th in a.threads:
        secs, cpu, got = best(lambda: model.score_batch(sentences, threads=th), a.repeat)
        if got != want:
            print("bench_python: score_batch(threads=%d) differs from score()" % th, file=sys.stderr)
            return 1
        sps = n / secs
        print("python_bench score_batch threads=%d sentences=%d tokens=%d seconds=%.3f "
              "cpu_seconds=%.3f sentences_per_s=%.0f tokens_per_s=%.0f sentences_per_cpu_s=%.0f "
              "vs_kenlm_module=%.2f vs_kenlm_module_cpu=%.2f"
              % (th, n, tokens, secs, cpu, sps, tokens / secs, n / cpu, sps / a.kenlm_sps,
                 n / cpu / a.kenlm_sps))
    if a.dask > 0:
        return bench_dask(a, model_path, model, sentences, tokens, want)
    return 0


def bench_vs_kenlm(a, fast):
    sys.path.insert(0, a.vs_kenlm)
    import kenlm as ken
    if not a.model:
        print("bench_python: --vs-kenlm needs --model (KenLM binaries)", file=sys.stderr)
        return 2
    sentences = read_lines(a.text, a.lines)
    n = len(sentences)
    tokens = sum(len(s.encode("utf-8").split()) + 1 for s in sentences)

    def score_loop(m, mod):
        score = m.score
        return [score(s) for s in sentences]

    def full_scores_loop(m, mod):
        full_scores = m.full_scores
        return [list(full_scores(s)) for s in sentences]

    def base_score_loop(m, mod):
        out = []
        base = m.BaseScore
        for s in sentences:
            st, st2 = mod.State(), mod.State()
            m.BeginSentenceWrite(st)
            total = 0.0
            for w in s.split():
                total += base(st, w, st2)
                st, st2 = st2, st
            out.append(total + base(st, "</s>", st2))
        return out

    for path in a.model:
        models = (("kenlm", ken, ken.Model(path)), ("fastsmt", fast, fast.Model(path)))
        for name, loop in (("score", score_loop), ("full_scores", full_scores_loop),
                           ("BaseScore", base_score_loop)):
            cpu = {"kenlm": [], "fastsmt": []}
            wall = {"kenlm": [], "fastsmt": []}
            got = {}
            for _ in range(a.repeat):
                for tag, mod, m in models:
                    c0, t0 = time.process_time(), time.perf_counter()
                    got[tag] = loop(m, mod)
                    wall[tag].append(time.perf_counter() - t0)
                    cpu[tag].append(time.process_time() - c0)
            if got["kenlm"] != got["fastsmt"]:
                print("bench_python: %s differs from KenLM's module on %s" % (name, path),
                      file=sys.stderr)
                return 1
            k, f = min(cpu["kenlm"]), min(cpu["fastsmt"])
            kw, fw = min(wall["kenlm"]), min(wall["fastsmt"])
            print("python_bench vs_kenlm model=%s loop=%s sentences=%d tokens=%d kenlm_cpu_s=%.3f "
                  "fastsmt_cpu_s=%.3f ratio_cpu=%.2f kenlm_wall_s=%.3f fastsmt_wall_s=%.3f "
                  "ratio_wall=%.2f" % (os.path.basename(path), name, n, tokens, k, f, k / f, kw,
                                       fw, kw / fw), flush=True)
    return 0


def bench_dask(a, model_path, model, sentences, tokens, want):
    import dask.bag as db
    import distributed

    import fastsmt.dask as fdask

    import tempfile

    n, w = len(sentences), a.dask
    local, _, _ = best(lambda: model.score_batch(sentences, threads=w), a.repeat)
    text = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False)
    with text:
        for s in sentences:
            text.write(s + "\n")
    size = os.path.getsize(text.name)
    with distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster):
        # lines keep their "\n", which glm's tokenizer (KenLM's) reads as a space
        bag = db.read_text(text.name, blocksize=size // (4 * w) + 1)
        if fdask.score_bag(bag, model_path).compute() != want:  # warm-up: each worker opens it
            print("bench_python: fastsmt.dask.score_bag differs from score()", file=sys.stderr)
            return 1
        secs, _, got = best(lambda: fdask.score_bag(bag, model_path).compute(), a.repeat)
    os.unlink(text.name)
    if got != want:
        print("bench_python: fastsmt.dask.score_bag differs from score()", file=sys.stderr)
        return 1
    print("python_bench dask_score_bag workers=%d partitions=%d sentences=%d tokens=%d "
          "seconds=%.3f sentences_per_s=%.0f tokens_per_s=%.0f score_batch_threads_seconds=%.3f "
          "vs_score_batch=%.2f" % (w, 4 * w, n, tokens, secs, n / secs, tokens / secs, local,
                                   local / secs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
