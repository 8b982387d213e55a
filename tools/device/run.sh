#!/bin/bash
# run.sh PHASE... — the GPU session's work on the device machine (see docs/device.md), from the
# repository root there, with the carried folder laid out as tools/device/prepare.sh leaves it:
#   carry/sysroot                      tools/device/make-sysroot.sh (headers + libs missing there)
#   carry/shared/...                   bible lm.5, dev/test-a English, the mono sample (xz)
#   carry/nmt/                         optional: an NMT model dir, src/tgt samples, an n-best list
# Phases (a session's one 8-minute call runs `build test decoder glm`; see docs/device.md):
#   build   configure and build glm + nmt + the decoder for sm_90 (Release)
#   test    the GPU tests, and GPU == CPU through the tools (glm query, nmt translate, nmt score)
#   glm     bench_glm --gpu-only on the bible lm.5 (every lanes setting)
#   big     the same on a synthetic 5-gram of ~9.5 M n-grams made from the mono sample
#   nmt     bench_nmt: output layer fused vs unfused, words/s and n-best scoring, CPU and GPU
#   decoder fastsmt -lm-batch gpu against off (byte-identical, test_decoder_lm_batch) and
#           bench_decoder -lm-batch off,cpu,gpu on the sample model (examples/sample)
# Results go to stdout and $OUT (when set).
set -u
root=$PWD
C=$root/carry
S=$C/sysroot
SH=$C/shared
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PKG_CONFIG_PATH=$S/pkgconfig LD_LIBRARY_PATH=$S/lib CMAKE_PREFIX_PATH=$S FASTSMT_SHARED=$SH
B=$root/build-gpu/bin
T=$root/build-gpu/tests
t0=$(date +%s)
stamp() { echo "== $1 at $(($(date +%s) - t0)) s"; }
for phase in "$@"; do
    stamp "$phase"
    case $phase in
    build)
        nvidia-smi -L
        cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DFASTSMT_CUDA=ON \
            -DFASTSMT_COMPONENTS="probingpt;glm;decoder;nmt" -DCMAKE_BUILD_TYPE=Release > "$OUT/cfg.log" 2>&1 ||
            tail -20 "$OUT/cfg.log"
        cmake --build build-gpu -j"$(nproc)" > "$OUT/build.log" 2>&1 || grep -E "error" "$OUT/build.log" | head -20
        ;;
    test)
        for t in test_glm_gpu test_nmt_out test_nmt; do
            FASTSMT_REQUIRE_GPU=1 timeout 120 "$T/$t" --verbose > "$OUT/$t.txt" 2>&1
            echo "$t: $(grep -E 'Synthesis' "$OUT/$t.txt")"
            grep -E "FAIL|Assert|lanes [0-9]|mode [0-9]" "$OUT/$t.txt" | head -8
        done
        zcat "$SH/models/bible-es-en/lm.5.arpa.gz" > /tmp/lm5.arpa
        "$B/glm" build /tmp/lm5.arpa /tmp/lm5.glm > /dev/null 2>&1
        "$B/glm" query /tmp/lm5.glm < "$SH/data/bible/test-a.en" > /tmp/cpu.txt
        "$B/glm" query --gpu /tmp/lm5.glm < "$SH/data/bible/test-a.en" > /tmp/gpu.txt
        cmp /tmp/cpu.txt /tmp/gpu.txt && echo "GLM_QUERY_GPU_EQUALS_CPU test-a"
        M=$root/tests/data/nmt
        "$B/nmt" translate --model "$M/tiny" --source "$M/fixture.src" > /tmp/nc.txt 2> /dev/null
        "$B/nmt" translate --gpu --model "$M/tiny" --source "$M/fixture.src" > /tmp/ng.txt
        cmp /tmp/nc.txt /tmp/ng.txt && echo "NMT_TRANSLATE_GPU_EQUALS_CPU fixture"
        ;;
    glm)
        [ -f /tmp/lm5.glm ] || { zcat "$SH/models/bible-es-en/lm.5.arpa.gz" > /tmp/lm5.arpa &&
            "$B/glm" build /tmp/lm5.arpa /tmp/lm5.glm > /dev/null; }
        xz -dc "$SH/data/mono/sample.en.xz" | head -60000 > /tmp/s.en
        timeout 120 "$B/bench_glm" --model /tmp/lm5.glm --text /tmp/s.en --gpu-only | tee "$OUT/bench_glm_lm5.txt"
        ;;
    big)
        xz -dc "$SH/data/mono/sample.en.xz" | python3 tools/make-synthetic-arpa.py --lines 200000 > /tmp/syn.arpa
        xz -dc "$SH/data/mono/sample.en.xz" | python3 tools/make-synthetic-arpa.py --skip 200000 --lines 60000 --text-only > /tmp/syn.txt
        "$B/glm" build /tmp/syn.arpa /tmp/syn.glm
        timeout 300 "$B/bench_glm" --model /tmp/syn.glm --text /tmp/syn.txt --gpu-only | tee "$OUT/bench_glm_syn.txt"
        ;;
    nmt)
        N=$C/nmt
        if [ -f "$N/config.json" ]; then
            timeout 500 "$B/bench_nmt" --no-cpu-outlayer --model "$N" --source "$N/src.txt" \
                --target "$N/tgt.txt" $([ -f "$N/nbest.txt" ] && echo --nbest "$N/nbest.txt") |
                tee "$OUT/bench_nmt.txt"
        else
            timeout 300 "$B/bench_nmt" --no-cpu-outlayer | tee "$OUT/bench_nmt.txt"
        fi
        ;;
    decoder)
        FASTSMT_REQUIRE_GPU=1 timeout 120 "$T/test_decoder_lm_batch" --verbose > "$OUT/test_decoder_lm_batch.txt" 2>&1
        echo "test_decoder_lm_batch: $(grep -E 'Synthesis' "$OUT/test_decoder_lm_batch.txt")"
        grep -E "FAIL|SKIP|Assert" "$OUT/test_decoder_lm_batch.txt" | head -8
        for w in 16 256; do
            timeout 60 "$B/bench_decoder" -f examples/sample/moses.ini -i examples/sample/sample.es \
                -t 1,16 -lm-batch off,cpu,gpu -lm-batch-width $w | tee -a "$OUT/bench_decoder.txt"
        done
        ;;
    *)
        echo "run.sh: unknown phase $phase" >&2
        exit 2
        ;;
    esac
done
stamp done
