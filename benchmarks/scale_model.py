#!/usr/bin/env python3
"""scale_model.py — a model of a fastsmt or glm query job over many nodes, from measured numbers.

It is arithmetic, not a measurement: the per-core speeds and the MPI costs default to what this
project measured on its 2-core machine (docs/scale.md, docs/decoder.md, docs/glm.md), the cluster's
numbers (file-system bandwidth, network, failure rate) are assumptions given as flags. It prints one
machine-readable line per job and phase, and says which phase bounds the job:

  python3 benchmarks/scale_model.py                       # the two example jobs of docs/scale.md
  python3 benchmarks/scale_model.py --task decode --words 1e10 --nodes 1000 --cores 64

Phases, for N nodes of C cores (one rank per node, C threads each, as docs/scale.md advises):
- start: the launcher and MPI_Init (measured: ~1.5 s for 3 ranks here; modelled as a tree,
  growing with log2 N) plus loading the model on every node: N copies read from the shared file
  system (aggregate bandwidth, and no node faster than its own link), or one read and a broadcast
  tree (--broadcast) when the file system is the limit;
- input: in file mode each rank reads its own byte ranges (aggregate file-system bandwidth); in
  standard-input mode rank 0 reads and sends everything (one node's link);
- compute: words / (N * C * per-core speed), times the MPI overhead measured here (+10% CPU for
  the decoder, chunks of --chunk-words);
- chunks: rank 0 answers every request for a chunk; at --handout-us per request it is a bottleneck
  only when chunks are tiny;
- output: named files are assembled by all ranks at once (aggregate bandwidth), standard output
  by rank 0 alone (one stream);
- failures: with a node MTBF of --mtbf-hours, the expected number of node losses during the job;
  each costs a relaunch with -resume (start again) and the chunks that were in flight.
The job's time is the sum of the phases that cannot overlap (start, then the slowest of input,
compute, chunk handout and output, which stream together, then the merge), plus the expected
failure cost.
"""
import argparse
import math
import sys

# Measured on this project's machine (2 cores; see docs/scale.md and the components' docs).
DECODE_WORDS_PER_CORE_S = 8100.0   # fastsmt, test-a, 2 threads: 16,223 words/s quiet (session 3)
GLM_TOKENS_PER_CORE_S = 5.0e6      # glm query, mono lm.5, one thread: 3.3-5.0 M tokens/s (loaded)
DECODE_MPI_CPU_OVERHEAD = 0.10     # bench_mpi.sh: 2 ranks x 1 thread vs 1 process x 2 threads
MPI_START_S_3_RANKS = 1.5          # a bare MPI hello with mpirun --oversubscribe -np 3
BYTES_PER_WORD = 6.0               # test-a and the mono sample: about 6 bytes a word with spaces


def phases(a):
    n, c = a.nodes, a.cores
    if a.task == "decode":
        speed = a.speed or DECODE_WORDS_PER_CORE_S
        overhead = DECODE_MPI_CPU_OVERHEAD
        out_bytes = a.words * BYTES_PER_WORD * (1 + a.nbest * 12)  # n-best lines ~12x the 1-best
    else:
        speed = a.speed or GLM_TOKENS_PER_CORE_S
        overhead = DECODE_MPI_CPU_OVERHEAD
        out_bytes = a.words / 20.0 * 12  # -v sentence: one ~12-byte score a line of ~20 words
    in_bytes = a.words * BYTES_PER_WORD
    fs = a.fs_gbps * 1e9
    link = a.link_gbps * 1e9 / 8
    start = MPI_START_S_3_RANKS * max(1.0, math.log2(max(n, 2)) / math.log2(3))
    if a.broadcast:
        load = a.model_gb * 1e9 / min(fs, link) + math.ceil(math.log2(max(n, 2))) * a.model_gb * 1e9 / link
    else:
        load = max(n * a.model_gb * 1e9 / fs, a.model_gb * 1e9 / link)
    read = in_bytes / (min(fs, n * link) if a.mode == "file" else link)
    compute = a.words / (n * c * speed) * (1 + overhead)
    chunks = a.words / a.chunk_words
    handout = chunks * a.handout_us * 1e-6
    write = out_bytes / (min(fs, n * link) if a.mode == "file" else min(link, a.stream_gbps * 1e9))
    merge = out_bytes / min(fs, n * link) if a.mode == "file" else 0.0
    stream = max(read, compute, handout, write if a.mode != "file" else 0.0)
    body = start + load + stream + merge
    lost = n * body / (a.mtbf_hours * 3600.0)
    per_chunk = a.chunk_words / (c * speed)
    fail = lost * (start + load + per_chunk)
    return {
        "start": start, "model_load": load, "input_read": read, "compute": compute,
        "chunk_handout": handout, "output_write": write if a.mode != "file" else 0.0,
        "merge": merge, "expected_failures": lost, "failure_cost": fail, "total": body + fail,
        "bound": max(("input_read", read), ("compute", compute), ("chunk_handout", handout),
                     ("output_write", write if a.mode != "file" else 0.0),
                     ("model_load", load), ("merge", merge), key=lambda kv: kv[1])[0],
        "core_hours": a.words / speed / 3600.0,
    }


def report(name, a):
    p = phases(a)
    print("scale_model job=%s task=%s words=%.3g nodes=%d cores=%d mode=%s model_gb=%.2f "
          "fs_gbps=%.0f link_gbps=%.0f" % (name, a.task, a.words, a.nodes, a.cores, a.mode,
                                          a.model_gb, a.fs_gbps, a.link_gbps))
    for k in ("start", "model_load", "input_read", "compute", "chunk_handout", "output_write",
              "merge", "failure_cost", "total"):
        print("scale_model job=%s phase=%s seconds=%.1f" % (name, k, p[k]))
    print("scale_model job=%s core_hours=%.1f expected_node_failures=%.3f bound=%s"
          % (name, p["core_hours"], p["expected_failures"], p["bound"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", choices=["decode", "score"])
    ap.add_argument("--words", type=float, help="words (decode) or tokens (score) in the corpus")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--cores", type=int, default=64, help="cores per node (threads of its rank)")
    ap.add_argument("--speed", type=float, help="words or tokens per core-second (default: measured)")
    ap.add_argument("--model-gb", type=float, default=1.0, help="binarized model size per node")
    ap.add_argument("--mode", choices=["file", "stdin"], default="file")
    ap.add_argument("--nbest", type=int, default=0, help="1 when an n-best list of 100 is written")
    ap.add_argument("--fs-gbps", type=float, default=100.0, help="shared file system, GB/s aggregate")
    ap.add_argument("--link-gbps", type=float, default=100.0, help="one node's link, Gbit/s")
    ap.add_argument("--stream-gbps", type=float, default=1.0, help="one output stream, GB/s")
    ap.add_argument("--broadcast", action="store_true", help="one model read, then a tree")
    ap.add_argument("--chunk-words", type=float, default=2e6, help="words a chunk (-chunk-bytes)")
    ap.add_argument("--handout-us", type=float, default=50.0, help="rank 0's cost per chunk")
    ap.add_argument("--mtbf-hours", type=float, default=50000.0, help="one node's mean time between failures")
    a = ap.parse_args()
    if a.task:
        if not a.words:
            ap.error("--task needs --words")
        report("custom", a)
        return 0
    # the two jobs docs/scale.md discusses
    for name, task, words, model, nbest in (("backtranslate", "decode", 1e10, 2.0, 0),
                                            ("ppl_filter", "score", 1e12, 4.0, 0)):
        a.task, a.words, a.model_gb, a.nbest = task, words, model, nbest
        report(name, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
