#!/bin/sh
# bench_glm_kenlm.sh — glm query beside KenLM's query, whole processes, on the same machine in the
# same run: each of glm's load methods and KenLM's default load, per model layout.
#   benchmarks/bench_glm_kenlm.sh [-n RUNS] [-w DIR] [-v word|summary] [-a] MODEL_ARPA KENLM_BIN_DIR GLM_BIN QUERY_TEXT
# MODEL_ARPA: an ARPA model (plain or compressed as glm reads it); KENLM_BIN_DIR: the folder of
# KenLM's build_binary and query, built from KenLM's public sources (never part of this
# repository); GLM_BIN: the glm binary; QUERY_TEXT: the sentences to score (plain or .xz/.gz).
# DIR (default $TMPDIR or /tmp, then bench_glm_kenlm.NAME, NAME the ARPA's file name) keeps the
# binaries made from the ARPA (KenLM probing and trie with build_binary, glm's trie and its
# 8-bit quantized trie with glm build) and the decompressed text; they are reused while newer
# than the ARPA. RUNS (default 3): runs of each measurement, taken in turns, the best kept.
# MODE (-v, default word): word runs both tools without -v, their default (a line of scores per
# sentence, each word's and the total), summary with -v summary (the perplexities only). Every
# command writes its output to a file; the first round checks that glm's output equals KenLM's
# on each KenLM layout (word: the per-word lines; summary: the perplexity, OOV and token lines),
# a mismatch stops.
# -a: also KenLM's other three layouts (build_binary trie -q 8 -b 8, trie -a 22, trie -a 22 -q 8
# -b 8), each with KenLM's query and glm's default load (layouts kenlm-trie-q8b8, kenlm-trie-a22,
# kenlm-trie-a22q8b8).
# One line per (layout, tool, load), machine-readable key=value:
#   mode=word|summary layout=L tool=glm|kenlm load=M wall_s user_s sys_s cpu_s max_rss_mb
#   ratio_wall ratio_cpu
# load=default is glm query without -l (its default load), the other loads are its -l values.
# wall_s, user_s, sys_s and max_rss_mb are of the run with the best wall, cpu_s the best user +
# sys; ratio_* is KenLM query's figure on the same layout (glm's own layouts: on KenLM's probing
# binary, KenLM's fastest) divided by this one's, so above 1 means faster than KenLM. Warm page
# cache: every file is read once before the runs.
# Without KenLM (no build_binary or query in KENLM_BIN_DIR) it says so and exits 77 (skipped).
set -eu
usage() {
  sed -n '4p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
}
RUNS=3 DIR="" MODE=word ALL=0
while [ $# -gt 0 ]; do
  case $1 in
  -n) [ $# -ge 2 ] || usage; RUNS=$2; shift 2 ;;
  -w) [ $# -ge 2 ] || usage; DIR=$2; shift 2 ;;
  -v) [ $# -ge 2 ] || usage; MODE=$2; shift 2
      case $MODE in word | summary) ;; *) echo "bench_glm_kenlm: -v wants word or summary" >&2; usage ;; esac ;;
  -a) ALL=1; shift ;;
  -h | --help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --) shift; break ;;
  -*) echo "bench_glm_kenlm: unknown option $1" >&2; usage ;;
  *) break ;;
  esac
done
[ $# -eq 4 ] || usage
ARPA=$1 KEN=$2 GLM=$3 TEXT=$4
if [ ! -x "$KEN/build_binary" ] || [ ! -x "$KEN/query" ]; then
  echo "bench_glm_kenlm: skipped: no KenLM build_binary and query in '$KEN'" >&2
  exit 77
fi
[ -r "$ARPA" ] || { echo "bench_glm_kenlm: $ARPA: cannot read" >&2; exit 2; }
[ -x "$GLM" ] || { echo "bench_glm_kenlm: $GLM: not an executable" >&2; exit 2; }
[ -r "$TEXT" ] || { echo "bench_glm_kenlm: $TEXT: cannot read" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_glm_kenlm: needs /usr/bin/time (GNU time)" >&2; exit 2; }
[ -n "$DIR" ] || DIR=${TMPDIR:-/tmp}/bench_glm_kenlm.$(basename "$ARPA")
mkdir -p "$DIR"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# make FILE SOURCE COMMAND: runs COMMAND (which writes FILE) unless FILE is newer than SOURCE
make() {
  if [ -s "$1" ] && [ "$1" -nt "$2" ]; then return 0; fi
  echo "bench_glm_kenlm: making $1" >&2
  sh -c "$3" > "$W/make.log" 2>&1 || { cat "$W/make.log" >&2; rm -f "$1"; exit 1; }
}
make "$DIR/kenlm.probing" "$ARPA" "'$KEN/build_binary' probing '$ARPA' '$DIR/kenlm.probing'"
make "$DIR/kenlm.trie" "$ARPA" "'$KEN/build_binary' trie '$ARPA' '$DIR/kenlm.trie'"
if [ "$ALL" = 1 ]; then
  make "$DIR/kenlm.trie-q8b8" "$ARPA" "'$KEN/build_binary' -q 8 -b 8 trie '$ARPA' '$DIR/kenlm.trie-q8b8'"
  make "$DIR/kenlm.trie-a22" "$ARPA" "'$KEN/build_binary' -a 22 trie '$ARPA' '$DIR/kenlm.trie-a22'"
  make "$DIR/kenlm.trie-a22q8b8" "$ARPA" \
    "'$KEN/build_binary' -a 22 -q 8 -b 8 trie '$ARPA' '$DIR/kenlm.trie-a22q8b8'"
fi
make "$DIR/glm.glm" "$ARPA" "'$GLM' build '$ARPA' '$DIR/glm.glm'"
make "$DIR/glm-q8b8.glm" "$ARPA" "'$GLM' build -q 8 -b 8 '$ARPA' '$DIR/glm-q8b8.glm'"
T=text.$(basename "$TEXT")
case $TEXT in
*.xz) make "$DIR/$T" "$TEXT" "xz -dc '$TEXT' > '$DIR/$T'" ;;
*.gz) make "$DIR/$T" "$TEXT" "gzip -dc '$TEXT' > '$DIR/$T'" ;;
*) make "$DIR/$T" "$TEXT" "cp '$TEXT' '$DIR/$T'" ;;
esac
for f in kenlm.probing kenlm.trie glm.glm glm-q8b8.glm "$T"; do cat "$DIR/$f" > /dev/null; done

# the measurements: "layout tool load file"; KenLM's first in each layout
cat > "$W/list" << EOF
kenlm-probing kenlm default kenlm.probing
kenlm-probing glm default kenlm.probing
kenlm-probing glm lazy kenlm.probing
kenlm-probing glm populate kenlm.probing
kenlm-probing glm read kenlm.probing
kenlm-trie kenlm default kenlm.trie
kenlm-trie glm default kenlm.trie
kenlm-trie glm lazy kenlm.trie
kenlm-trie glm populate kenlm.trie
kenlm-trie glm read kenlm.trie
glm-trie glm default glm.glm
glm-trie glm lazy glm.glm
glm-trie glm populate glm.glm
glm-trie glm read glm.glm
glm-trie-q8b8 glm default glm-q8b8.glm
glm-trie-q8b8 glm lazy glm-q8b8.glm
glm-trie-q8b8 glm populate glm-q8b8.glm
glm-trie-q8b8 glm read glm-q8b8.glm
EOF
if [ "$ALL" = 1 ]; then
  for l in trie-q8b8 trie-a22 trie-a22q8b8; do
    cat "$DIR/kenlm.$l" > /dev/null
    printf 'kenlm-%s kenlm default kenlm.%s\nkenlm-%s glm default kenlm.%s\n' "$l" "$l" "$l" "$l"
  done >> "$W/list"
fi

# one run: appends "wall user sys rss_kb" to $W/times.N (N: the line of the list)
once() {
  n=$1 tool=$2 load=$3 file=$4
  # word: no -v, both tools' default (KenLM's own -v word drops the Total lines and line breaks)
  v=""
  [ "$MODE" = summary ] && v="-v summary"
  if [ "$tool" = kenlm ]; then
    set -- "$KEN/query" $v "$DIR/$file"
  elif [ "$load" = default ]; then
    set -- "$GLM" query $v "$DIR/$file"
  else
    set -- "$GLM" query $v -l "$load" "$DIR/$file"
  fi
  /usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" < "$DIR/$T" > "$W/out.$n" 2> "$W/err" || {
    cat "$W/err" >&2
    echo "bench_glm_kenlm: failed: $*" >&2
    exit 1
  }
  cat "$W/t" >> "$W/times.$n"
}
# the lines both tools print alike: the per-word lines (KenLM's summary lines and timings differ
# by design), or with -v summary the perplexities, OOVs and tokens
words() {
  if [ "$MODE" = summary ]; then
    grep '^\(Perplexity\|OOVs\|Tokens\)' "$1"
  else
    grep -v '^\(Perplexity\|OOVs\|Tokens\|Name\|name\|VmPeak\|RSSMax\)' "$1" | grep 'Total:'
  fi
}
r=0
while [ $r -lt "$RUNS" ]; do
  n=0
  while read -r layout tool load file; do
    n=$((n + 1))
    once $n "$tool" "$load" "$file"
    if [ $r -eq 0 ] && [ "$tool" = kenlm ]; then
      words "$W/out.$n" > "$W/ref.$layout" || {
        echo "bench_glm_kenlm: KenLM's query printed no lines to compare on $file" >&2
        exit 1
      }
    elif [ $r -eq 0 ] && [ -f "$W/ref.$layout" ]; then
      words "$W/out.$n" | cmp -s - "$W/ref.$layout" || {
        echo "bench_glm_kenlm: glm query -v $MODE (load $load) differs from KenLM's query on $file" >&2
        exit 1
      }
    fi
    rm -f "$W/out.$n"
  done < "$W/list"
  r=$((r + 1))
done

# best of each: wall (and its run's user, sys, rss), cpu = the least user + sys
best() { sort -n -k1,1 "$1" | head -1; }
bestcpu() { awk '{c = $2 + $3; if (NR == 1 || c < b) b = c} END {printf "%.2f", b}' "$1"; }
n=0
while read -r layout tool load file; do
  n=$((n + 1))
  set -- $(best "$W/times.$n")
  cpu=$(bestcpu "$W/times.$n")
  if [ "$tool" = kenlm ]; then
    ref_wall=$1 ref_cpu=$cpu
    [ "$layout" = kenlm-probing ] && probe_wall=$1 probe_cpu=$cpu
  elif [ "$layout" = glm-trie ] || [ "$layout" = glm-trie-q8b8 ]; then
    ref_wall=$probe_wall ref_cpu=$probe_cpu
  fi
  awk -v v="$MODE" -v l="$layout" -v t="$tool" -v m="$load" -v w="$1" -v u="$2" -v s="$3" \
    -v k="$4" -v c="$cpu" -v rw="$ref_wall" -v rc="$ref_cpu" 'BEGIN {
      f = "mode=%s layout=%s tool=%s load=%s wall_s=%.2f user_s=%.2f sys_s=%.2f cpu_s=%.2f"
      f = f " max_rss_mb=%.0f ratio_wall=%.2f ratio_cpu=%.2f\n"
      printf f, v, l, t, m, w, u, s, c, k / 1024, (w > 0 ? rw / w : 0), (c > 0 ? rc / c : 0) }'
done < "$W/list"
