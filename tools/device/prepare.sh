#!/bin/bash
# prepare.sh [NMT_MODEL_DIR [NBEST]] — lays out carry/ (git-ignored) for tools/device/run.sh: the
# sysroot, the shared files the GPU runs read (../shared does not travel; 64 MiB in all), and
# optionally an NMT model with 200 source/target lines of test-a and the n-best list of its first
# 100 sentences. A call carries carry/sysroot with carry/shared (phases build test glm big) or with
# carry/nmt (phases build nmt): together they exceed the limit. Prints what each would send.
set -euo pipefail
SHARED=${FASTSMT_SHARED:-../shared}
C=carry
mkdir -p $C/shared/models/bible-es-en $C/shared/data/bible $C/shared/data/mono
[ -d $C/sysroot ] || tools/device/make-sysroot.sh $C/sysroot > /dev/null
cp "$SHARED/models/bible-es-en/lm.5.arpa.gz" $C/shared/models/bible-es-en/
cp "$SHARED/data/bible/dev.en" "$SHARED/data/bible/test-a.en" $C/shared/data/bible/
cp "$SHARED/data/mono/sample.en.xz" $C/shared/data/mono/
if [ $# -ge 1 ]; then
    rm -rf $C/nmt
    mkdir -p $C/nmt
    cp "$1"/config.json "$1"/model.safetensors "$1"/src.vocab "$1"/tgt.vocab $C/nmt/
    head -200 "$SHARED/data/bible/test-a.es" > $C/nmt/src.txt
    head -200 "$SHARED/data/bible/test-a.en" > $C/nmt/tgt.txt
    [ $# -ge 2 ] && awk -F' [|][|][|] ' '$1 < 100' "$2" > $C/nmt/nbest.txt
fi
tracked=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
for set in shared nmt; do
    [ -d $C/$set ] || continue
    echo "carry [$C/sysroot, $C/$set]: $(( ( $(du -sbc $C/sysroot $C/$set | tail -1 | cut -f1) + tracked ) / 1048576 )) MiB of 64"
done
