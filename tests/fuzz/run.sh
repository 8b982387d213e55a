#!/bin/sh
# tests/fuzz/run.sh [SECONDS] [HARNESS...] — builds the libFuzzer harnesses (if needed) and runs each
# for SECONDS (default 20) over its seed corpus; exits 1 when any harness finds a crash, a leak, a
# timeout or an out-of-memory, 0 otherwise. Without clang or its fuzzer runtime it says
# "skipped: no clang/libFuzzer" and exits 0. tests/fuzz/README.md: long campaigns, findings.
#
# Environment: FASTSMT_FUZZ_BUILD (build folder, default build-fuzz), FASTSMT_FUZZ_JOBS (build jobs,
# default 2), CC (default clang), FASTSMT_FUZZ_ARGS (more libFuzzer flags for every harness),
# FASTSMT_FUZZ_EXCLUDE (seed file names left out of the corpora, e.g. known crashers while a
# campaign looks for new ones).
# The corpus a run grows is kept in $BUILD/fuzz-work/corpus/HARNESS (seeded from
# tests/fuzz/corpus/HARNESS and, for the binary formats, from tables built from tests/data);
# artifacts (reproducers) go to $BUILD/fuzz-work/artifacts/.
set -eu

secs=${1:-20}
[ $# -gt 0 ] && shift
case $secs in
    ''|*[!0-9]*) echo "usage: tests/fuzz/run.sh [SECONDS] [HARNESS...]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FASTSMT_FUZZ_BUILD:-$root/build-fuzz}
jobs=${FASTSMT_FUZZ_JOBS:-2}
cc=${CC:-clang}

# clang with libFuzzer present?
probe=$(mktemp -d "${TMPDIR:-/tmp}/fastsmt-fuzz-probe-XXXXXX")
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    > "$probe/p.c"
if ! command -v "$cc" >/dev/null 2>&1 ||
   ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    echo "fuzz: skipped: no clang/libFuzzer ($cc -fsanitize=fuzzer does not link)"
    exit 0
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
    CC=$cc cmake -S "$root" -B "$build" -DFASTSMT_FUZZ=ON -DFASTSMT_CUDA=OFF -DFASTSMT_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target fuzz glm probingpt -j "$jobs" >/dev/null

all="arpa glm glm_query kenlm ppt_text ppt moses_ini dec_tables dec_input nmt_config safetensors nbest
     dist_manifest"
harnesses=${*:-$all}
work=$build/fuzz-work
data=$root/tests/data
mkdir -p "$work/artifacts"

# Seeds of the binary formats, built from tests/data by this build (so they follow the format).
gen=$work/generated
if [ ! -d "$gen" ]; then
    mkdir -p "$gen.new/glm" "$gen.new/ppt"
    export ASAN_OPTIONS=detect_leaks=0
    for f in chain suffix; do
        "$build/bin/glm" build "$data/glm/$f.arpa" "$gen.new/glm/$f-k3.glm" -K 3 >/dev/null 2>&1
    done
    "$build/bin/glm" build "$data/decoder/tiny/lm.arpa" "$gen.new/glm/tiny.glm" >/dev/null 2>&1
    # quantized files (glm build -q -b): their records and bins
    "$build/bin/glm" build "$data/glm/chain.arpa" "$gen.new/glm/chain-q8b8-k3.glm" -K 3 -q 8 \
        >/dev/null 2>&1
    "$build/bin/glm" build "$data/glm/chain.arpa" "$gen.new/glm/chain-q1b2.glm" -q 1 -b 2 \
        >/dev/null 2>&1
    "$build/bin/glm" build "$data/decoder/tiny/lm.arpa" "$gen.new/glm/tiny-q4b3.glm" -q 4 -b 3 \
        >/dev/null 2>&1
    "$build/bin/probingpt" build --phrase-table "$data/probingpt/small.pt" \
        --reordering "$data/probingpt/small.rt" --out "$gen.new/ppt/small.ppt" >/dev/null 2>&1
    "$build/bin/probingpt" build --phrase-table "$data/probingpt/fields.pt" \
        --out "$gen.new/ppt/fields.ppt" >/dev/null 2>&1
    "$build/bin/probingpt" build --phrase-table "$data/decoder/tiny/phrase-table" \
        --reordering "$data/decoder/tiny/reordering-table" --out "$gen.new/ppt/tiny.ppt" >/dev/null 2>&1
    unset ASAN_OPTIONS
    mv "$gen.new" "$gen"
fi

failed=""
printf '%-12s %12s %10s  %s\n' harness execs exec/s result > "$work/summary.txt"
for h in $harnesses; do
    bin=$build/fuzz/fuzz_$h
    if [ ! -x "$bin" ]; then
        echo "fuzz: no harness $bin" >&2
        failed="$failed $h"
        continue
    fi
    corpus=$work/corpus/$h
    mkdir -p "$corpus"
    [ -d "$root/tests/fuzz/corpus/$h" ] && cp "$root/tests/fuzz/corpus/$h"/* "$corpus"/ 2>/dev/null || true
    [ -d "$gen/$h" ] && cp "$gen/$h"/* "$corpus"/
    for x in ${FASTSMT_FUZZ_EXCLUDE:-}; do
        rm -f "$corpus/$x"
    done
    dict=
    [ -f "$root/tests/fuzz/dict/$h.dict" ] && dict=-dict=$root/tests/fuzz/dict/$h.dict
    log=$work/$h.log
    echo "fuzz: $h for ${secs}s (log $log)"
    set +e
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$h-" $dict ${FASTSMT_FUZZ_ARGS:-} "$corpus" > "$log" 2>&1
    rc=$?
    set -e
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        result=ok
    else
        result="FAILED (rc $rc): $(grep -m1 -E 'ERROR|fuzz harness:' "$log" || echo see log)"
        art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        [ -n "$art" ] && result="$result; reproducer $art"
        failed="$failed $h"
    fi
    printf '%-12s %12s %10s  %s\n' "$h" "${execs:-0}" "${rate:-0}" "$result" >> "$work/summary.txt"
done
cat "$work/summary.txt"
if [ -n "$failed" ]; then
    echo "fuzz: FAILED:$failed (logs in $work)"
    exit 1
fi
echo "fuzz: all harnesses ran ${secs}s without a finding"
