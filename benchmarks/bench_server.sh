#!/bin/sh
# bench_server.sh — fastsmt's server beside Moses2's server under the same load, on loopback:
# throughput and latency at several numbers of concurrent clients, each beside its own command
# line's words/s on the same input, and an overload at about 4x the sustainable rate.
#   benchmarks/bench_server.sh [-n RUNS] [-c CLIENTS,...] [-t THREADS] [-d SECONDS] [-p PORT] MOSES2 MOSES2_INI FASTSMT_BIN FASTSMT_MODEL [INPUT]
# MOSES2: a moses2 binary built with xmlrpc-c from Moses's public sources (never part of this
# repository; docs/server.md says how); MOSES2_INI: its moses.ini for the model; FASTSMT_BIN: the
# folder holding fastsmt and bench_server (build/bin); FASTSMT_MODEL: the same model for fastsmt, a
# fastsmt-binarize output folder or a moses.ini; INPUT: the source text, by default
# $FASTSMT_SHARED/data/bible/test-a.es. RUNS (default 3): runs of each measurement, the best taken;
# CLIENTS (default 1,8,64): the concurrent clients; THREADS (default 2): each server's -threads;
# SECONDS (default 10): the overload's length; PORT (default 23000 + PID % 20000): Moses2's port
# (fastsmt binds a free one).
# Both decode with -s 100, cube pruning (pop limit 400) and distortion limit 6; Moses2's server is
# let keep 256 connections (-server-maxconn, its default 15 would refuse 64 clients' connections).
# Both servers run for the whole benchmark; their measurements are taken in turns, RUNS times.
# bench_server sends every sentence of INPUT once per measurement as XML-RPC translate calls (keep-
# alive connections, CLIENTS at a time) and compares each answer with its own decoder's command
# line output (mismatches). The command lines' words/s are words / (wall - the wall of a one-line run), best of
# RUNS. One line per measurement (machine-readable, key=value; bench_server.c says each key):
#   bench=server name=fastsmt|moses2 clients=C sentences=N words=W seconds=S sentences_s=X words_s=Y
#     p50_ms=.. p95_ms=.. p99_ms=.. errors=E mismatches=M cli_words_s=X ratio=Y/X threads=T
#   bench=server_vs_moses2 clients=C fastsmt_words_s=X moses2_words_s=Y ratio=X/Y threads=T
#     cli_1best_differ=D/N (the sentences whose 1-best differs between the two command lines)
#   bench=server_overload name=.. rate=R seconds=S sent=N accepted=A refused=F errors=E
#     refused_p50_ms refused_p99_ms accepted_p50_ms accepted_p99_ms accepted_sentences_s threads=T
# (the overload's rate: 4x that server's best sentences/s above).
# A closed-loop run with errors or mismatches is printed as it comes, never taken as the best, and
# makes the script exit 1 at the end.
# Without MOSES2 (no arguments, or an empty first argument) it says so and exits 77 (skipped).
set -eu
usage() {
  sed -n '5p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
}
RUNS=3 CLIENTS=1,8,64 THREADS=2 SECONDS_OVER=10 MPORT=$((23000 + $$ % 20000))
while [ $# -gt 0 ]; do
  case $1 in
  -n) [ $# -ge 2 ] || usage; RUNS=$2; shift 2 ;;
  -c) [ $# -ge 2 ] || usage; CLIENTS=$2; shift 2 ;;
  -t) [ $# -ge 2 ] || usage; THREADS=$2; shift 2 ;;
  -d) [ $# -ge 2 ] || usage; SECONDS_OVER=$2; shift 2 ;;
  -p) [ $# -ge 2 ] || usage; MPORT=$2; shift 2 ;;
  -h | --help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --) shift; break ;;
  -*) echo "bench_server: unknown option $1" >&2; usage ;;
  *) break ;;
  esac
done
BENCH=bench_server
. "$(dirname "$0")/moses2_args.sh"
[ -x "$FBIN/bench_server" ] || not "$FBIN/bench_server" "an executable (FASTSMT_BIN/bench_server)"
count() { # count NAME VALUE: a whole number >= 1
  case $2 in '' | *[!0-9]* | 0*) echo "bench_server: $1 wants a count >= 1, not '$2'" >&2; exit 2 ;; esac
}
count -n "$RUNS"
count -t "$THREADS"
count -d "$SECONDS_OVER"
count -p "$MPORT"
case ,$CLIENTS, in *,,* | *[!0-9,]* | *,0*) echo "bench_server: -c wants counts >= 1 like 1,8,64, not '$CLIENTS'" >&2; exit 2 ;; esac

W=$(mktemp -d)
FPID="" MPID=""
cleanup() {
  for p in $FPID $MPID; do
    kill "$p" 2>/dev/null || true
  done
  for p in $FPID $MPID; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$W"
  rm -f "/tmp/moses-server.$MPORT.pid" # the pid file Moses2's server writes and leaves when killed
}
trap cleanup EXIT
trap 'exit 1' INT TERM
cp "$INPUT" "$W/input"
head -n 1 "$W/input" > "$W/one"
words=$(wc -w < "$W/input")
[ "$words" -gt 0 ] || { echo "bench_server: $INPUT: no words" >&2; exit 2; }
SEARCH="-s 100 -cube-pruning-pop-limit 400"

# ---- the command lines: once DECODER FILE sets R to the wall seconds; keeps fastsmt's output
cli() {
  if [ "$1" = fastsmt ]; then
    echo "'$FBIN/fastsmt' -f '$FMODEL' -threads $THREADS -v 0 $SEARCH -dl 6"
  else
    echo "'$MOSES2' -f '$MOSES2_INI' -threads $THREADS $SEARCH -search-algorithm 1 -distortion-limit 6"
  fi
}
once() {
  t0=$(date +%s%N)
  sh -c "$(cli "$1") < '$W/$2' > '$W/out.$1' 2> '$W/err'" || {
    tail -n 20 "$W/err" >&2
    echo "bench_server: $1 failed: $(cli "$1") < $2" >&2
    exit 1
  }
  t1=$(date +%s%N)
  [ "$(wc -l < "$W/out.$1")" -eq "$(wc -l < "$W/$2")" ] || {
    echo "bench_server: $1 wrote $(wc -l < "$W/out.$1") lines for $(wc -l < "$W/$2") input lines" >&2
    exit 1
  }
  R=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
}
low() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
FA="" FL="" MA="" ML=""
i=0
while [ $i -lt "$RUNS" ]; do
  once fastsmt input; FA=$(low "$FA" "$R"); cp "$W/out.fastsmt" "$W/expect.fastsmt"
  once moses2 input; MA=$(low "$MA" "$R"); cp "$W/out.moses2" "$W/expect.moses2"
  once fastsmt one; FL=$(low "$FL" "$R")
  once moses2 one; ML=$(low "$ML" "$R")
  i=$((i + 1))
done
fcli=$(awk -v w="$words" -v a="$FA" -v l="$FL" 'BEGIN { d = a - l; printf "%.0f", w / (d > 0.001 ? d : 0.001) }')
mcli=$(awk -v w="$words" -v a="$MA" -v l="$ML" 'BEGIN { d = a - l; printf "%.0f", w / (d > 0.001 ? d : 0.001) }')
# the sentences whose 1-best differs between the two command lines (white space at the ends aside)
differ=$(awk 'NR == FNR { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); a[FNR] = $0; next }
  { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); if (a[FNR] != $0) n++ } END { print n + 0 }' \
  "$W/expect.fastsmt" "$W/expect.moses2")

# ---- the servers
"$FBIN/fastsmt" -f "$FMODEL" --server --server-port 0 --server-host 127.0.0.1 -threads "$THREADS" \
  -v 0 $SEARCH -dl 6 2> "$W/fastsmt.log" &
FPID=$!
"$MOSES2" -f "$MOSES2_INI" --server --server-port "$MPORT" -threads "$THREADS" $SEARCH \
  -search-algorithm 1 -distortion-limit 6 -server-maxconn 256 -server-maxconn-backlog 256 \
  > "$W/moses2.out" 2> "$W/moses2.log" &
MPID=$!
FPORT=""
n=0
while [ -z "$FPORT" ]; do
  FPORT=$(sed -n 's/^fastsmt: server listening on port \([0-9][0-9]*\)$/\1/p' "$W/fastsmt.log")
  kill -0 "$FPID" 2>/dev/null || { cat "$W/fastsmt.log" >&2; echo "bench_server: fastsmt --server exited" >&2; exit 1; }
  n=$((n + 1))
  [ $n -lt 600 ] || { echo "bench_server: fastsmt --server did not say its port within 60 s" >&2; exit 1; }
  [ -n "$FPORT" ] || sleep 0.1
done
for s in "fastsmt $FPORT $FPID" "moses2 $MPORT $MPID"; do
  set -- $s
  "$FBIN/bench_server" -p "$2" -i "$W/input" -wait 600 || {
    tail -n 20 "$W/$1.log" >&2
    echo "bench_server: $1's server never answered on port $2" >&2
    exit 1
  }
  kill -0 "$3" 2>/dev/null || { echo "bench_server: $1's server exited" >&2; exit 1; }
done

# ---- closed loop: every CLIENTS count, each server in turn, RUNS times; the best words/s kept
for c in $(echo "$CLIENTS" | tr ',' ' '); do : > "$W/best.fastsmt.$c"; : > "$W/best.moses2.$c"; done
keep() { # keep FILE LINE: LINE replaces FILE's line when its words_s is higher
  new=$(echo "$2" | sed -n 's/.* words_s=\([0-9.]*\).*/\1/p')
  old=$(sed -n 's/.* words_s=\([0-9.]*\).*/\1/p' "$1")
  if [ -z "$old" ] || awk -v a="$new" -v b="$old" 'BEGIN { exit !(a > b) }'; then echo "$2" > "$1"; fi
}
failed=0
i=0
while [ $i -lt "$RUNS" ]; do
  for c in $(echo "$CLIENTS" | tr ',' ' '); do
    for s in "fastsmt $FPORT $fcli" "moses2 $MPORT $mcli"; do
      set -- $s
      line=$("$FBIN/bench_server" -p "$2" -i "$W/input" -c "$c" -name "$1" -expect "$W/expect.$1" \
        -cli-words-s "$3") || { echo "bench_server: the client failed against $1" >&2; exit 1; }
      case $line in
      *" errors=0 mismatches=0 "*) keep "$W/best.$1.$c" "$line" ;;
      *) echo "$line threads=$THREADS" # a faulty run is shown, never kept as the best
         failed=1 ;;
      esac
    done
  done
  i=$((i + 1))
done
for c in $(echo "$CLIENTS" | tr ',' ' '); do
  for s in fastsmt moses2; do
    if [ -s "$W/best.$s.$c" ]; then
      echo "$(cat "$W/best.$s.$c") threads=$THREADS"
    else
      echo "bench=server name=$s clients=$c clean_runs=0 threads=$THREADS"
    fi
  done
  awk -v c="$c" -v t="$THREADS" -v d="$differ" -v n="$(wc -l < "$W/input")" \
    -v f="$(sed -n 's/.* words_s=\([0-9.]*\).*/\1/p' "$W/best.fastsmt.$c")" \
    -v m="$(sed -n 's/.* words_s=\([0-9.]*\).*/\1/p' "$W/best.moses2.$c")" \
    'BEGIN { printf "bench=server_vs_moses2 clients=%d fastsmt_words_s=%.0f moses2_words_s=%.0f ratio=%.2f threads=%d cli_1best_differ=%d/%d\n",
             c, f, m, f / (m > 0 ? m : 1), t, d, n }'
done

# ---- overload: 4x each server's best sentences/s for SECONDS
for s in "fastsmt $FPORT" "moses2 $MPORT"; do
  set -- $s
  rate=$(cat "$W"/best."$1".* | sed -n 's/.* sentences_s=\([0-9.]*\).*/\1/p' |
    awk 'BEGIN { m = 0 } { if ($1 > m) m = $1 } END { printf "%.1f", 4 * m }')
  line=$("$FBIN/bench_server" -p "$2" -i "$W/input" -rate "$rate" -duration "$SECONDS_OVER" -name "$1") || {
    echo "bench_server: the overload client failed against $1" >&2
    exit 1
  }
  echo "$line threads=$THREADS"
done
if [ "$failed" -ne 0 ]; then
  echo "bench_server: a closed-loop run had errors or answers unlike its command line's (shown above)" >&2
  exit 1
fi
