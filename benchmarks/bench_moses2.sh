#!/bin/sh
# bench_moses2.sh — fastsmt beside Moses2 on the same machine, in the same run: words/s and words per
# CPU-second of each decoder and their ratio, at each thread count.
#   benchmarks/bench_moses2.sh [-n RUNS] [-t THREADS,...] MOSES2 MOSES2_INI FASTSMT_BIN FASTSMT_MODEL [INPUT]
# MOSES2: the moses2 binary, built from Moses's public sources (never part of this repository);
# MOSES2_INI: its moses.ini for the model (docs/decoder.md "Benchmark" says how the shared bible model
# is binarized for it); FASTSMT_BIN: the folder holding fastsmt; FASTSMT_MODEL: the same model for
# fastsmt, a fastsmt-binarize output folder or a moses.ini; INPUT: the source text, by default
# $FASTSMT_SHARED/data/bible/test-a.es. RUNS (default 3): runs of each measurement, the best taken.
# THREADS (default 1,2): the thread counts.
# Both decoders search with -s 100, cube pruning (pop limit 400) and distortion limit 6. For each
# thread count the four runs (each decoder on INPUT and on INPUT's first line) are taken in turns,
# RUNS times, so that both see the same load; each time is the best of its RUNS runs. Wall and CPU
# (user + system) are of the whole process; the load (the one-line run) is subtracted for the
# decoding alone. One line per thread count (machine-readable, key=value):
#   bench=decoder_vs_moses2 threads=T sentences=N words=W
#     fastsmt_words_s=X moses2_words_s=Y ratio=X/Y          (words / (wall - load wall))
#     fastsmt_words_cpu_s=X moses2_words_cpu_s=Y ratio_cpu=X/Y  (words / (CPU - load CPU))
#     fastsmt_process_words_s=.. moses2_process_words_s=.. ratio_process=..  (words / whole wall)
#     fastsmt_wall_s fastsmt_cpu_s fastsmt_load_wall_s fastsmt_load_cpu_s fastsmt_peak_rss_mb
#     and the same five for moses2
# Without MOSES2 (no arguments, or an empty first argument) it says so and exits 77 (skipped).
set -eu
usage() {
  sed -n '4p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
}
RUNS=3 THREADS=1,2
while [ $# -gt 0 ]; do
  case $1 in
  -n) [ $# -ge 2 ] || usage; RUNS=$2; shift 2 ;;
  -t) [ $# -ge 2 ] || usage; THREADS=$2; shift 2 ;;
  -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --) shift; break ;;
  -*) echo "bench_moses2: unknown option $1" >&2; usage ;;
  *) break ;;
  esac
done
BENCH=bench_moses2
. "$(dirname "$0")/moses2_args.sh"
case $RUNS in '' | *[!0-9]* | 0*) echo "bench_moses2: -n wants a count >= 1, not '$RUNS'" >&2; exit 2 ;; esac
case ,$THREADS, in *,,* | *[!0-9,]* | *,0*) echo "bench_moses2: -t wants counts >= 1 like 1,2, not '$THREADS'" >&2; exit 2 ;; esac

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cp "$INPUT" "$W/input"
head -n 1 "$W/input" > "$W/one"
sentences=$(wc -l < "$W/input")
words=$(wc -w < "$W/input")
[ "$words" -gt 0 ] || { echo "bench_moses2: $INPUT: no words" >&2; exit 2; }

# the command line of a decoder (fastsmt or moses2) with T threads, reading its standard input
cmd() {
  if [ "$1" = fastsmt ]; then
    echo "'$FBIN/fastsmt' -f '$FMODEL' -threads $2 -v 0 -s 100 -cube-pruning-pop-limit 400 -dl 6"
  else
    echo "'$MOSES2' -f '$MOSES2_INI' -threads $2 -s 100 -search-algorithm 1 -cube-pruning-pop-limit 400 -distortion-limit 6"
  fi
}

# one run: once DECODER THREADS FILE sets R to "wall cpu peak_rss_kb"; the output must have a line
# per input line
once() {
  t0=$(date +%s%N)
  /usr/bin/time -f "%U %S %M" -o "$W/t" sh -c "$(cmd "$1" "$2") < '$W/$3' > '$W/out' 2> '$W/err'" || {
    tail -n 20 "$W/err" >&2
    echo "bench_moses2: $1 failed: $(cmd "$1" "$2") < $3" >&2
    exit 1
  }
  t1=$(date +%s%N)
  n=$(wc -l < "$W/out")
  [ "$n" -eq "$(wc -l < "$W/$3")" ] || {
    echo "bench_moses2: $1 wrote $n lines for $(wc -l < "$W/$3") input lines" >&2
    exit 1
  }
  R=$(awk -v a="$t0" -v b="$t1" '{ printf "%.3f %.2f %d", (b - a) / 1e9, $1 + $2, $3 }' "$W/t")
}

# best OLD NEW: the element-wise minimum of wall and CPU, the largest peak RSS
best() {
  [ -z "$1" ] && { echo "$2"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ");
    printf "%.3f %.2f %d", (y[1] < x[1] ? y[1] : x[1]), (y[2] < x[2] ? y[2] : x[2]), (y[3] > x[3] ? y[3] : x[3]) }'
}

# warm the page cache with both models before any measurement
once fastsmt 1 one
once moses2 1 one

for T in $(echo "$THREADS" | tr ',' ' '); do
  FA="" FL="" MA="" ML=""
  i=0
  while [ $i -lt "$RUNS" ]; do
    once fastsmt "$T" input
    FA=$(best "$FA" "$R")
    once moses2 "$T" input
    MA=$(best "$MA" "$R")
    once fastsmt "$T" one
    FL=$(best "$FL" "$R")
    once moses2 "$T" one
    ML=$(best "$ML" "$R")
    i=$((i + 1))
  done
  awk -v t="$T" -v s="$sentences" -v w="$words" -v fa="$FA" -v fl="$FL" -v ma="$MA" -v ml="$ML" '
    function pos(x) { return x > 0.001 ? x : 0.001 } # a decoding time too short to measure
    BEGIN {
      split(fa, F, " "); split(fl, FL, " "); split(ma, M, " "); split(ml, ML, " ")
      fw = w / pos(F[1] - FL[1]); mw = w / pos(M[1] - ML[1])
      fc = w / pos(F[2] - FL[2]); mc = w / pos(M[2] - ML[2])
      fp = w / pos(F[1]); mp = w / pos(M[1])
      printf "bench=decoder_vs_moses2 threads=%d sentences=%d words=%d", t, s, w
      printf " fastsmt_words_s=%.0f moses2_words_s=%.0f ratio=%.2f", fw, mw, fw / mw
      printf " fastsmt_words_cpu_s=%.0f moses2_words_cpu_s=%.0f ratio_cpu=%.2f", fc, mc, fc / mc
      printf " fastsmt_process_words_s=%.0f moses2_process_words_s=%.0f ratio_process=%.2f", fp, mp, fp / mp
      printf " fastsmt_wall_s=%.3f fastsmt_cpu_s=%.2f fastsmt_load_wall_s=%.3f fastsmt_load_cpu_s=%.2f fastsmt_peak_rss_mb=%.0f",
        F[1], F[2], FL[1], FL[2], F[3] / 1024
      printf " moses2_wall_s=%.3f moses2_cpu_s=%.2f moses2_load_wall_s=%.3f moses2_load_cpu_s=%.2f moses2_peak_rss_mb=%.0f\n",
        M[1], M[2], ML[1], ML[2], M[3] / 1024
    }'
done
