# moses2_args.sh — sourced by bench_moses2.sh and bench_server.sh after their options, with their
# arguments MOSES2 MOSES2_INI FASTSMT_BIN FASTSMT_MODEL [INPUT] still in "$@": exits 77 (skipped)
# without MOSES2 (no arguments, or an empty first one), calls the caller's usage on a wrong count,
# and sets MOSES2, MOSES2_INI, FBIN, FMODEL (a fastsmt-binarize folder stands for its moses.ini) and
# INPUT (by default $FASTSMT_SHARED/data/bible/test-a.es), each checked (exit 2); BENCH names the
# caller in messages.
if [ $# -eq 0 ] || [ -z "$1" ]; then
  echo "$BENCH: skipped: no Moses2 binary given (benchmarks/$BENCH.sh --help)" >&2
  exit 77
fi
if [ $# -lt 4 ] || [ $# -gt 5 ]; then usage; fi
MOSES2=$1 MOSES2_INI=$2 FBIN=$3 FMODEL=$4
if [ $# -eq 5 ]; then
  INPUT=$5
elif [ -n "${FASTSMT_SHARED:-}" ]; then
  INPUT=$FASTSMT_SHARED/data/bible/test-a.es
else
  echo "$BENCH: no INPUT given and FASTSMT_SHARED not set" >&2
  exit 2
fi
[ -d "$FMODEL" ] && FMODEL=$FMODEL/moses.ini
not() { echo "$BENCH: $1: not $2" >&2; exit 2; }
[ -x "$MOSES2" ] || not "$MOSES2" "an executable (MOSES2)"
[ -f "$MOSES2_INI" ] || not "$MOSES2_INI" "a file (MOSES2_INI)"
[ -x "$FBIN/fastsmt" ] || not "$FBIN/fastsmt" "an executable (FASTSMT_BIN/fastsmt)"
[ -f "$FMODEL" ] || not "$FMODEL" "a file (FASTSMT_MODEL)"
[ -f "$INPUT" ] || not "$INPUT" "a file (INPUT)"
