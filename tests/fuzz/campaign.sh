#!/bin/sh
# tests/fuzz/campaign.sh SECONDS [HARNESS...] — a campaign for new findings: each harness in turn
# (one process at a time) for SECONDS in libFuzzer's fork mode, going on after a crash
# (-ignore_crashes/-ignore_ooms/-ignore_timeouts), from the seed corpus with its regress-* inputs
# (FASTSMT_FUZZ_EXCLUDE="NAME..." leaves seed files out, e.g. a known crasher while it is open).
# Corpora grow in $BUILD/fuzz-campaign/corpus/HARNESS, reproducers land in
# $BUILD/fuzz-campaign/artifacts/, and summary.txt gets harness, execs, wall and CPU seconds,
# exec/s (of wall time) and artifacts. Several campaigns may share a build (each harness once).
# Needs the build of run.sh (run it once first). FASTSMT_FUZZ_ARGS: more libFuzzer flags.
# On a shared machine wall time says little: FASTSMT_FUZZ_CPU=S stops a harness once its processes
# have used S CPU seconds, FASTSMT_FUZZ_EXECS=N once it has run N inputs (whichever comes first; SECONDS
# then only bounds the wall time), checked every 10 s.
set -eu
secs=${1:?usage: tests/fuzz/campaign.sh SECONDS [HARNESS...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FASTSMT_FUZZ_BUILD:-$root/build-fuzz}
all="arpa glm glm_query kenlm ppt_text ppt moses_ini dec_tables dec_input nmt_config safetensors nbest"
work=$build/fuzz-campaign
mkdir -p "$work/artifacts"
[ -f "$work/summary.txt" ] ||
    printf '%-12s %12s %7s %7s %8s %9s\n' harness execs wall_s cpu_s exec/s artifacts > "$work/summary.txt"
for h in ${*:-$all}; do
    corpus=$work/corpus/$h
    mkdir -p "$corpus"
    for f in "$root/tests/fuzz/corpus/$h"/* "$build/fuzz-work/generated/$h"/*; do
        case " ${FASTSMT_FUZZ_EXCLUDE:-} " in *" $(basename "$f") "*) continue ;; esac
        [ -f "$f" ] && cp "$f" "$corpus/"
    done
    dict=
    [ -f "$root/tests/fuzz/dict/$h.dict" ] && dict=-dict=$root/tests/fuzz/dict/$h.dict
    before=$(ls "$work/artifacts" | grep -c "^$h-" || true)
    log=$work/$h.log
    start=$(date +%s)
    rm -f "$work/$h.time"
    timer=
    [ -x /usr/bin/time ] && timer="/usr/bin/time -f %U+%S -o $work/$h.time" # Debian package time
    # shellcheck disable=SC2086
    setsid $timer "$build/fuzz/fuzz_$h" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
        -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -artifact_prefix="$work/artifacts/$h-" $dict ${FASTSMT_FUZZ_ARGS:-} "$corpus" > "$log" 2>&1 &
    pid=$!
    if [ -n "${FASTSMT_FUZZ_CPU:-}${FASTSMT_FUZZ_EXECS:-}" ]; then
        while kill -0 "$pid" 2>/dev/null; do
            sleep 10
            # CPU of the session: every live process's own time plus what it has reaped
            used=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v sid="$pid" -v hz="$(getconf CLK_TCK)" '
                { sub(/^.*\) /, ""); if ($4 == sid) t += $12 + $13 + $14 + $15 }
                END { printf "%d", t / hz }')
            done_execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' "$log" | tail -1)
            if [ "$used" -ge "${FASTSMT_FUZZ_CPU:-999999999}" ] ||
               [ "${done_execs:-0}" -ge "${FASTSMT_FUZZ_EXECS:-999999999999}" ]; then
                # the fork-mode parent (the time wrapper's child) exits on SIGTERM (system()
                # ignores SIGINT while a job runs); the job it leaves is killed once it is gone
                fpid=$(pgrep -P "$pid" || true)
                pkill -TERM -P "$pid" 2>/dev/null || true
                for _ in 1 2 3 4 5 6 7 8 9 10; do
                    pgrep -P "$pid" >/dev/null || break
                    sleep 1
                done
                sleep 1
                pkill -KILL -s "$pid" 2>/dev/null || true
                [ -n "$fpid" ] && rm -rf "${TMPDIR:-/tmp}/libFuzzerTemp.FuzzWithFork$fpid.dir"
                break
            fi
        done
    fi
    wait "$pid" || true
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' "$log" | tail -1) # fork mode: "#EXECS: cov: ..."
    after=$(ls "$work/artifacts" | grep -c "^$h-" || true)
    rate=$(( ${execs:-0} / (took > 0 ? took : 1) ))
    cpu='?'
    [ -s "$work/$h.time" ] && cpu=$(awk -F+ 'END { printf "%.0f", $1 + $2 }' "$work/$h.time")
    printf '%-12s %12s %7s %7s %8s %9s\n' "$h" "${execs:-0}" "$took" "$cpu" "$rate" "$((after - before))" \
        >> "$work/summary.txt"
done
cat "$work/summary.txt"
