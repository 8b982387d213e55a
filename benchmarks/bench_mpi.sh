#!/bin/sh
# bench_mpi.sh — the cost of running over MPI ranks (tools/dist.c, docs/scale.md) on one machine:
# the same work as 1 process x 2 threads and as 2 ranks x 1 thread, each best of RUNS, wall and CPU
# (user + system of the process and its children: mpirun's ranks are its children here).
#   benchmarks/bench_mpi.sh BIN_DIR SHARED_DIR [RUNS]
# Measures (one line each, machine-readable: bench=mpi key=value ...):
#   fastsmt test-a (1,002 verses, the bible model of SHARED_DIR/models/bible-es-en, text tables
#   binarized once into fastsmt's cache) from a file and from standard input;
#   glm query -v summary over SHARED_DIR/data/mono/sample.en.xz (300,000 sentences) with the bible
#   lm.5 built as a .glm, from a file and from standard input.
# overhead_pct compares the best walls: (ranks - process) / process * 100.
set -eu
BIN=$1 SHARED=$2 RUNS=${3:-3}
BIN=$(cd "$BIN" && pwd) SHARED=$(cd "$SHARED" && pwd)
root=""
[ "$(id -u)" -eq 0 ] && root="--allow-run-as-root"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# one run of a command: "wall cpu"
once() {
  /usr/bin/time -f "%e %U %S" -o "$W/t" sh -c "$1" > /dev/null 2> "$W/err" || {
    cat "$W/err" >&2
    echo "bench_mpi: failed: $1" >&2
    exit 1
  }
  awk '{printf "%.2f %.2f", $1, $2 + $3}' "$W/t"
}
lower() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); exit !(b == "" || x[1] < y[1]) }'; }
# the best (by wall) of RUNS runs of A and of B, taken in turns so that both see the same load:
# sets PA and PB to "wall cpu"
pair() {
  PA="" PB=""
  i=0
  while [ $i -lt "$RUNS" ]; do
    a=$(once "$1")
    lower "$a" "$PA" && PA=$a
    b=$(once "$2")
    lower "$b" "$PB" && PB=$b
    i=$((i + 1))
  done
}

report() { # report NAME WORDS "wall cpu" "wall cpu"
  set -- "$1" "$2" $3 $4
  awk -v n="$1" -v w="$2" -v pw="$3" -v pc="$4" -v rw="$5" -v rc="$6" 'BEGIN {
    printf "bench=mpi case=%s words=%d process_2t_wall_s=%.2f process_2t_cpu_s=%.2f process_words_s=%.0f ranks_2x1_wall_s=%.2f ranks_2x1_cpu_s=%.2f ranks_words_s=%.0f overhead_pct=%.1f\n",
      n, w, pw, pc, w / pw, rw, rc, w / rw, (rw - pw) / pw * 100 }'
}

INI="$SHARED/models/bible-es-en/moses.ini"
cp "$SHARED/data/bible/test-a.es" "$W/test-a.es"
words=$(wc -w < "$W/test-a.es")
"$BIN/fastsmt" -f "$INI" -input-file "$W/test-a.es" -v 0 > /dev/null 2>&1 # fills the model cache
FS1="'$BIN/fastsmt' -f '$INI' -threads 2 -v 0 -input-file '$W/test-a.es'"
pair "$FS1" "cd '$W' && mpirun $root -np 2 '$BIN/fastsmt' -f '$INI' -threads 1 -v 0 -input-file test-a.es"
report fastsmt-test-a-file "$words" "$PA" "$PB"
pair "$FS1" "mpirun $root -np 2 '$BIN/fastsmt' -f '$INI' -threads 1 -v 0 < '$W/test-a.es'"
report fastsmt-test-a-stdin "$words" "$PA" "$PB"

xz -dc "$SHARED/data/mono/sample.en.xz" > "$W/mono.en"
"$BIN/glm" build "$SHARED/models/bible-es-en/lm.5.arpa.gz" "$W/lm5.glm" 2> /dev/null
words=$(wc -w < "$W/mono.en")
G1="'$BIN/glm' query -v summary --threads 2 '$W/lm5.glm' < '$W/mono.en'"
pair "$G1" "cd '$W' && mpirun $root -np 2 '$BIN/glm' query -v summary -input-file mono.en lm5.glm"
report glm-query-mono-file "$words" "$PA" "$PB"
pair "$G1" "mpirun $root -np 2 '$BIN/glm' query -v summary '$W/lm5.glm' < '$W/mono.en'"
report glm-query-mono-stdin "$words" "$PA" "$PB"
# the fixed cost of a start over ranks: one line, one process and 2 ranks (mpirun, MPI_Init, the
# model mapped by each rank, MPI_Finalize)
echo "a b c" > "$W/one.txt"
pair "'$BIN/glm' query -v summary '$W/lm5.glm' < '$W/one.txt'" \
  "mpirun $root -np 2 '$BIN/glm' query -v summary '$W/lm5.glm' < '$W/one.txt'"
report glm-query-one-line-start 3 "$PA" "$PB"
