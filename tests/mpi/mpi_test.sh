#!/bin/sh
# mpi_test.sh — fastsmt and glm query over MPI ranks (dist/, docs/scale.md) give one process's
# output byte for byte: file and standard input, n-best lists and alignments, every -v of glm query;
# a killed rank fails the job, keeps the finished chunks, and -resume completes it identically; a
# manifest that does not fit the command (other flags, a changed input or model file, a damaged or
# out-of-range manifest) is refused.
#   mpi_test.sh FASTSMT GLM SOURCE_DIR HAVE_MPI [KILL_RANK_LIB]
# KILL_RANK_LIB (tests/mpi/kill_rank.c) is preloaded into the ranks to kill one as a failing machine
# would.
# Exits 77 (ctest: Skipped) when the build has no MPI or mpirun is missing. Everything runs on the
# tiny model (tests/data/decoder/tiny) and the sample (examples/sample), with --oversubscribe, so
# that three ranks run on any machine.
set -u
FASTSMT=$1 GLM=$2 SRC=$3 HAVE_MPI=$4 KILL_LIB=${5:-}
abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
FASTSMT=$(abs "$FASTSMT") GLM=$(abs "$GLM") SRC=$(abs "$SRC")
if [ "$HAVE_MPI" != ON ]; then
  # what it can test: a start by a launcher with several ranks is refused at once, naming the cause
  for t in "$FASTSMT -f x" "$GLM query x"; do
    if OMPI_COMM_WORLD_SIZE=3 $t > /dev/null 2> "${TMPDIR:-/tmp}/mpi_test.$$"; then
      echo "FAIL: $t started as 3 ranks without MPI ran"; exit 1
    fi
    grep -q "this build has no MPI" "${TMPDIR:-/tmp}/mpi_test.$$" || {
      echo "FAIL: $t: $(cat "${TMPDIR:-/tmp}/mpi_test.$$")"; rm -f "${TMPDIR:-/tmp}/mpi_test.$$"; exit 1; }
    rm -f "${TMPDIR:-/tmp}/mpi_test.$$"
  done
  echo "ok: a start by mpirun with 3 ranks is refused by a build without MPI"
  echo "SKIP: this build has no MPI (apt-get install libopenmpi-dev openmpi-bin, rebuild)"
  exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: no mpirun (apt-get install openmpi-bin)"
  exit 77
fi
if [ ! -f "$KILL_LIB" ]; then
  echo "FAIL: no kill_rank library ($KILL_LIB)"; exit 1
fi
# ASan's leak checker reports Open MPI's own allocations: off in the ranks; the kill_rank library is
# preloaded before the sanitizer's runtime
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0:verify_asan_link_order=0"
export ASAN_OPTIONS
root=""
[ "$(id -u)" -eq 0 ] && root="--allow-run-as-root"
mpi() { # mpi NP cmd...: NP ranks
  np=$1
  shift
  mpirun $root --oversubscribe -np "$np" "$@"
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
# mpi_kill RANK K NP cmd...: NP ranks, RANK killed as it finishes its K-th chunk
mpi_kill() {
  kr=$1 kk=$2
  shift 2
  np=$1
  shift
  mpirun $root --oversubscribe -x LD_PRELOAD="$KILL_LIB" -x DIST_TEST_KILL_RANK="$kr" \
    -x DIST_TEST_KILL_AFTER="$kk" -np "$np" "$@"
}
same() { # same NAME FILE1 FILE2
  if cmp -s "$2" "$3"; then ok "$1"; else bad "$1 ($2 and $3 differ)"; diff "$2" "$3" | head -5; fi
}

TINY="$SRC/tests/data/decoder/tiny/moses.ini"
SAMPLE="$SRC/examples/sample/moses.ini"
# tiny input: 60 lines of 0 to 12 words (unknown words, an empty line, a CRLF line), so that short
# and long lines fall into different chunks
awk 'BEGIN { split("a b c x y a b zz", w, " "); s = 7
  for (i = 0; i < 60; i++) { n = (i * 7) % 13; line = ""
    for (j = 0; j < n; j++) { s = (s * 1103515245 + 12345) % 2147483648; line = line (j ? " " : "") w[1 + s % 8] }
    if (i == 17) printf "%s\r\n", line; else print line } }' > tiny.txt

# ---- fastsmt, tiny model, a file (each rank reads its chunks), n-best, alignment, -t
"$FASTSMT" -f "$TINY" -threads 1 -n-best-list ref.nbest 5 -alignment-output-file ref.al -t \
  -input-file tiny.txt > ref.out 2> ref.err || bad "fastsmt one process ($(cat ref.err))"
[ -s ref.nbest ] || bad "the reference n-best list is empty"
mpi 3 "$FASTSMT" -f "$TINY" -threads 2 -n-best-list m.nbest 5 -alignment-output-file m.al -t \
  -input-file tiny.txt -chunk-bytes 40 > m.out 2> m.err || bad "fastsmt 3 ranks, file ($(tail -3 m.err))"
same "fastsmt tiny file 1-best" ref.out m.out
same "fastsmt tiny file n-best" ref.nbest m.nbest
same "fastsmt tiny file alignment" ref.al m.al
grep -q "rank 2: .* words/s" m.err && ok "per-rank words/s reported" || bad "no per-rank report"
[ ! -e tiny.txt.fastsmt-parts ] && ok "parts folder removed after success" || bad "parts left: $(ls -A tiny.txt.fastsmt-parts | head -5)"

# ---- the same from standard input (rank 0 hands out chunks), n-best to standard output
"$FASTSMT" -f "$TINY" -n-best-list - 3 < tiny.txt > ref2.out 2> /dev/null
mpi 3 "$FASTSMT" -f "$TINY" -n-best-list - 3 -chunk-bytes 30 < tiny.txt > m2.out 2> m2.err \
  || bad "fastsmt 3 ranks, stdin ($(tail -3 m2.err))"
same "fastsmt tiny stdin, n-best on stdout" ref2.out m2.out

# ---- unknown words to a file, the alignment to standard output (its lines after each 1-best)
"$FASTSMT" -f "$TINY" -output-unknowns refu.unk -alignment-output-file - -input-file tiny.txt \
  > refu.out 2> /dev/null
mpi 3 "$FASTSMT" -f "$TINY" -output-unknowns mu.unk -alignment-output-file - -input-file tiny.txt \
  -chunk-bytes 25 > mu.out 2> mu.err || bad "fastsmt 3 ranks, unknowns ($(tail -3 mu.err))"
same "fastsmt -alignment-output-file - over ranks" refu.out mu.out
same "fastsmt -output-unknowns over ranks" refu.unk mu.unk

# ---- the sample model: distinct 100-best, file and stdin
"$FASTSMT" -f "$SAMPLE" -n-best-list ref3.nbest 100 distinct \
  -input-file "$SRC/examples/sample/sample.es" > ref3.out 2> /dev/null
cp "$SRC/examples/sample/sample.es" sample.es
mpi 3 "$FASTSMT" -f "$SAMPLE" -n-best-list m3.nbest 100 distinct -input-file sample.es \
  -chunk-bytes 150 > m3.out 2> m3.err || bad "fastsmt sample 3 ranks ($(tail -3 m3.err))"
same "fastsmt sample file 1-best" ref3.out m3.out
same "fastsmt sample file 100-best distinct" ref3.nbest m3.nbest
mpi 3 "$FASTSMT" -f "$SAMPLE" -n-best-list m4.nbest 100 distinct -chunk-bytes 150 \
  < sample.es > m4.out 2> m4.err || bad "fastsmt sample 3 ranks stdin ($(tail -3 m4.err))"
same "fastsmt sample stdin 1-best" ref3.out m4.out
same "fastsmt sample stdin 100-best distinct" ref3.nbest m4.nbest

# ---- a killed rank: the job fails, nothing is presented as complete, -resume finishes it
# (on a copy of the tiny model, whose files are then changed)
cp -rp "$SRC/tests/data/decoder/tiny" tinym
TINYC="$T/tinym/moses.ini"
"$FASTSMT" -f "$TINYC" -n-best-list refk.nbest 5 -input-file tiny.txt > refk.out 2> /dev/null
rm -f k.nbest
mpi_kill 1 1 3 "$FASTSMT" -f "$TINYC" -n-best-list k.nbest 5 \
  -input-file tiny.txt -chunk-bytes 40 > k.out 2> k.err
rc=$?
[ $rc -ne 0 ] && ok "a killed rank fails the job (exit $rc)" || bad "a killed rank: exit 0"
grep -q "kill_rank: killed" k.err && ok "rank 1 was killed" || bad "rank 1 not killed: $(cat k.err)"
grep -q "rank 1" k.err && ok "the failure names the rank" || bad "no rank named: $(cat k.err)"
[ ! -e k.nbest ] && [ ! -s k.out ] && ok "no output presented after the failure" \
  || bad "output left after the failure"
[ -f tiny.txt.fastsmt-parts/manifest ] && ok "finished chunks kept with a manifest" \
  || bad "no manifest kept"
n_done=$(grep -c '^done ' tiny.txt.fastsmt-parts/manifest)
[ "$n_done" -ge 1 ] && ok "manifest lists $n_done finished chunks" || bad "no finished chunk"
# a run that is not -resume must not start over the unfinished job
mpi 2 "$FASTSMT" -f "$TINYC" -n-best-list k.nbest 5 -input-file tiny.txt > /dev/null 2> k2.err \
  && bad "an unfinished job was started over" || true
grep -q "resume" k2.err && ok "an unfinished job's folder is refused without -resume" \
  || bad "no -resume advice: $(cat k2.err)"
# other flags: refused
mpi 2 "$FASTSMT" -f "$TINYC" -n-best-list k.nbest 7 -input-file tiny.txt -resume > /dev/null \
  2> k3.err && bad "a resume with other flags ran" || true
grep -q "other flags" k3.err && ok "a resume with other flags is refused" \
  || bad "no refusal: $(cat k3.err)"
# an input changed since (its time): refused
cp -p tiny.txt tiny.saved
touch tiny.txt
mpi 2 "$FASTSMT" -f "$TINYC" -n-best-list k.nbest 5 -input-file tiny.txt -resume > /dev/null \
  2> k6.err && bad "a resume over a changed input ran" || true
grep -q "changed" k6.err && ok "a resume over a changed input is refused" \
  || bad "no refusal: $(cat k6.err)"
touch -r tiny.saved tiny.txt
# a file of the model changed since (the ini, a table, the LM: their time): refused
for f in moses.ini phrase-table reordering-table lm.arpa; do
  cp -p "tinym/$f" model.saved
  touch "tinym/$f"
  mpi 2 "$FASTSMT" -f "$TINYC" -n-best-list k.nbest 5 -input-file tiny.txt -resume > /dev/null \
    2> k7.err && bad "a resume over a changed $f ran"
  grep -q "changed since" k7.err && ok "a resume over a changed $f is refused" \
    || bad "no refusal for $f: $(cat k7.err)"
  touch -r model.saved "tinym/$f"
done
# a manifest whose chunk size is out of range (found by fuzzing: 0 divided by zero, 2^64-1 wrapped
# into a plan of no chunks and a job "done" having translated nothing): refused, the job failed
cp tiny.txt.fastsmt-parts/manifest manifest.saved
for C in 0 18446744073709551615 1099511627777; do
  awk -v C="$C" 'NR == 2 { $5 = C } { print }' manifest.saved > tiny.txt.fastsmt-parts/manifest
  mpi 2 "$FASTSMT" -f "$TINYC" -n-best-list k.nbest 5 -input-file tiny.txt -resume > k8.out \
    2> k8.err
  rc=$?
  [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "manifest:2: the chunk size .* out of range" k8.err \
    && ok "a manifest with chunk size $C is refused (exit $rc)" \
    || bad "a manifest with chunk size $C: exit $rc, $(cat k8.err)"
  [ ! -e k.nbest ] || bad "chunk size $C: an n-best list was presented"
done
cp manifest.saved tiny.txt.fastsmt-parts/manifest
# the same command, fewer ranks, other threads: completes identically
mpi 2 "$FASTSMT" -f "$TINYC" -threads 2 -n-best-list k.nbest 5 -input-file tiny.txt -resume \
  > k.out 2> k4.err || bad "-resume failed: $(tail -3 k4.err)"
same "-resume 1-best" refk.out k.out
cmp -s refk.nbest k.nbest && ok "-resume n-best" || bad "-resume n-best differs"
[ ! -e tiny.txt.fastsmt-parts ] && ok "parts removed after the resumed job" || bad "parts left: $(ls -A tiny.txt.fastsmt-parts | head -5)"
"$FASTSMT" -f "$TINY" -input-file tiny.txt -resume > /dev/null 2> k5.err \
  && bad "-resume without mpirun ran" || ok "-resume without mpirun is refused"

# ---- a refused line (over 1000 words): an empty line in its place and a failed run, as one process
{ head -5 tiny.txt; awk 'BEGIN { for (i = 0; i < 1001; i++) printf "a "; print "" }'; tail -5 tiny.txt; } > long.txt
"$FASTSMT" -f "$TINY" -input-file long.txt > ref5.out 2> /dev/null && bad "one process accepted a 1001-word line"
mpi 3 "$FASTSMT" -f "$TINY" -input-file long.txt -chunk-bytes 40 > m5.out 2> m5.err \
  && bad "3 ranks accepted a 1001-word line" || ok "3 ranks fail on a refused line"
same "the refused line's output" ref5.out m5.out
grep -q "line 6:" m5.err && ok "the refused line is named by its global number" || bad "no 'line 6:' in $(cat m5.err)"

# ---- glm query: every -v, file and stdin; the summary's sums added in input order
"$FASTSMT" -f "$SAMPLE" -n-best-list en.nbest 20 -input-file sample.es > /dev/null 2>&1
cut -d'|' -f4 en.nbest > en.txt # 200 English lines
cat en.txt en.txt en.txt > en3.txt
"$GLM" build "$SRC/examples/sample/lm.3.arpa.gz" lm.glm 2> /dev/null || bad "glm build"
for v in summary sentence word; do
  "$GLM" query -v $v lm.glm < en3.txt > g.ref 2> /dev/null
  mpi 3 "$GLM" query -v $v -input-file en3.txt --chunk-bytes 700 lm.glm > g.file 2> g.err \
    || bad "glm query -v $v 3 ranks, file ($(tail -3 g.err))"
  same "glm query -v $v, file" g.ref g.file
  mpi 3 "$GLM" query -v $v --chunk-bytes 500 lm.glm < en3.txt > g.stdin 2> g.err \
    || bad "glm query -v $v 3 ranks, stdin ($(tail -3 g.err))"
  same "glm query -v $v, stdin" g.ref g.stdin
done
"$GLM" query -n -v sentence lm.glm < en3.txt > g.ref 2> /dev/null
mpi 2 "$GLM" query -n -v sentence -input-file en3.txt --chunk-bytes 900 lm.glm > g.file 2> /dev/null
same "glm query -n, file" g.ref g.file
mpi 2 "$GLM" query -b lm.glm < en3.txt > /dev/null 2> g.err && bad "glm query -b ran over ranks"
grep -q -- "-b over MPI ranks" g.err && ok "glm query -b refused over ranks" || bad "$(cat g.err)"
# killed and resumed
"$GLM" query -v summary lm.glm < en3.txt > g.ref 2> /dev/null
mpi_kill 2 1 3 "$GLM" query -v summary -input-file en3.txt --chunk-bytes 700 \
  lm.glm > g.k 2> g.err && bad "glm query: a killed rank: exit 0"
grep -q "kill_rank: killed" g.err && ok "glm query: rank 2 was killed" || bad "glm: $(cat g.err)"
[ -f en3.txt.glm-parts/manifest ] && ok "glm query: chunks kept" || bad "glm query: no manifest"
# the model changed since (its time): refused, naming the cause; back as it was: resumed
cp -p lm.glm lm.saved
touch lm.glm
mpi 2 "$GLM" query -v summary -input-file en3.txt --resume lm.glm > /dev/null 2> g.err \
  && bad "glm query: a resume over a changed model ran"
grep -q "changed since" g.err && ok "glm query: a resume over a changed model is refused" \
  || bad "glm query: no refusal: $(cat g.err)"
touch -r lm.saved lm.glm
mpi 3 "$GLM" query -v summary -input-file en3.txt --resume lm.glm > g.k 2> g.err \
  || bad "glm query --resume ($(tail -3 g.err))"
same "glm query --resume summary" g.ref g.k

echo "$fails failure(s)"
[ $fails -eq 0 ]
