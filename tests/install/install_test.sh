#!/bin/sh
# install_test.sh — installs the build tree into a scratch prefix and uses it as a user outside the
# tree would (ctest label "install"; cmake/FastsmtInstall.cmake registers it):
#   - the layout: tools, headers, libfastsmt.so.0 (SONAME, only the API's prefixes exported),
#     libfastsmt.a, fastsmt.pc, the CMake package, the man pages when the build made them
#   - each installed header compiles alone (C11, -Wall -Wextra -Werror -Wpedantic)
#   - tests/install/consumer.c built with `pkg-config --cflags --libs fastsmt` and, separately, with
#     find_package(fastsmt) (tests/install/consumer: shared and static), each run and its output
#     compared with what the build tree's tools print for the same inputs
# Environment (set by ctest): BUILD SOURCE WORK CMAKE CC TOOLS (space separated) MAN (1: man pages
# expected) SAN_FLAGS (the sanitizer flags of the build, given to the consumers too).
set -u
: "${BUILD:?}" "${SOURCE:?}" "${WORK:?}" "${CMAKE:?}" "${CC:?}" "${TOOLS:?}"
MAN=${MAN:-0} SAN_FLAGS=${SAN_FLAGS:-}
data="$SOURCE/tests/data"
prefix="$WORK/prefix"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
die() { echo "FAIL $*"; exit 1; }

rm -rf "$WORK" && mkdir -p "$WORK" || die "cannot make $WORK"
"$CMAKE" --install "$BUILD" --prefix "$prefix" >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; die "cmake --install $BUILD --prefix $prefix"; }

# ---- layout
libdir=$(cd "$prefix" && for d in lib lib64 lib/*-linux-gnu; do
  [ -f "$d/pkgconfig/fastsmt.pc" ] && echo "$d" && break; done)
[ -n "$libdir" ] || die "no fastsmt.pc under $prefix/lib*/pkgconfig"
for t in $TOOLS; do
  [ -x "$prefix/bin/$t" ] || fail "not installed: bin/$t"
  if [ "$MAN" = 1 ]; then
    [ -f "$prefix/share/man/man1/$t.1" ] || [ -f "$prefix/share/man/man1/$t.1.gz" ] ||
      fail "not installed: share/man/man1/$t.1(.gz)"
  fi
done
for f in include/fastsmt/glm.h include/fastsmt/probingpt.h include/fastsmt/decoder.h \
         include/fastsmt/nmt.h "$libdir/libfastsmt.a" "$libdir/libfastsmt.so" \
         "$libdir/cmake/fastsmt/fastsmtConfig.cmake" "$libdir/cmake/fastsmt/fastsmtConfigVersion.cmake"; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
soname=$(readelf -d "$prefix/$libdir/libfastsmt.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case "$soname" in
  libfastsmt.so.[0-9]*) [ -e "$prefix/$libdir/$soname" ] || fail "SONAME $soname not installed" ;;
  *) fail "libfastsmt.so: SONAME '$soname' (want libfastsmt.so.MAJOR)" ;;
esac
ls "$prefix/$libdir"/libfastsmt.so.*.*.* >/dev/null 2>&1 || fail "no libfastsmt.so.X.Y.Z"
nm -D --defined-only "$prefix/$libdir/libfastsmt.so" | awk '{print $NF}' |
  grep -v -E '^(ppt|glm|dec|nmt|smt)_|^FASTSMT_[0-9]+$' >"$WORK/foreign-symbols"
[ -s "$WORK/foreign-symbols" ] && fail "libfastsmt.so exports symbols outside the API:" &&
  head "$WORK/foreign-symbols"

# ---- each header alone (and twice: include guards)
for h in "$prefix"/include/fastsmt/*.h; do
  n=$(basename "$h")
  printf '#include <fastsmt/%s>\n#include <fastsmt/%s>\nint main(void) { return 0; }\n' "$n" "$n" |
    "$CC" -std=c11 -Wall -Wextra -Werror -Wpedantic -fsyntax-only -I"$prefix/include" -x c - ||
    fail "include/fastsmt/$n does not compile alone"
done

# ---- what the build tree's tools print for the consumer's inputs
bin="$BUILD/bin"
mkdir -p "$WORK/ref"
{
  printf 'glm order %s ' "$(grep -c '^ngram [0-9]*=' "$data/decoder/tiny/lm.arpa")"
  printf 'A B X\n' | "$bin/glm" query -v sentence "$data/decoder/tiny/lm.arpa" | head -n 1
  "$bin/probingpt" build --phrase-table "$data/probingpt/small.pt" --out "$WORK/ref/small.ppt" \
    >/dev/null 2>&1 && printf 'casa\n' | "$bin/probingpt" query "$WORK/ref/small.ppt"
  printf 'a b c\n' | XDG_CACHE_HOME="$WORK/ref/cache" "$bin/fastsmt" \
    -f "$data/decoder/tiny/moses.ini" 2>/dev/null
  head -n 1 "$data/nmt/fixture.src" >"$WORK/ref/src"
  head -n 1 "$data/nmt/fixture.ref" >"$WORK/ref/tgt"
  "$bin/nmt" score --model "$data/nmt/tiny" --source "$WORK/ref/src" --target "$WORK/ref/tgt" \
    --threads 1 2>/dev/null
} >"$WORK/expected" || die "the build tree's tools failed on the consumer's inputs"
[ "$(wc -l <"$WORK/expected")" -ge 5 ] || { cat "$WORK/expected"; die "too few expected lines"; }

# run_consumer NAME PROGRAM NEEDS_SHARED(1/0): runs it, compares, checks how it links libfastsmt
run_consumer() {
  mkdir -p "$WORK/run-$1"
  if ! XDG_CACHE_HOME="$WORK/run-$1/cache" "$2" "$data" "$WORK/run-$1" >"$WORK/run-$1/out"; then
    fail "$1: the consumer failed"
  elif ! cmp -s "$WORK/expected" "$WORK/run-$1/out"; then
    fail "$1: output differs from the tools'"; diff "$WORK/expected" "$WORK/run-$1/out"
  else
    echo "ok $1"
  fi
  if readelf -d "$2" | grep -q "NEEDED.*\[$soname\]"; then
    [ "$3" = 1 ] || fail "$1: linked with $soname, should be static"
  else
    [ "$3" = 0 ] || fail "$1: not linked with $soname"
  fi
}

# ---- pkg-config (only the scratch prefix's .pc files)
pcflags=$(PKG_CONFIG_LIBDIR="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs fastsmt) ||
  die "pkg-config --cflags --libs fastsmt"
pclib=$(PKG_CONFIG_LIBDIR="$prefix/$libdir/pkgconfig" pkg-config --variable=libdir fastsmt)
echo "pkg-config --cflags --libs fastsmt: $pcflags"
# shellcheck disable=SC2086 # flags are words
if "$CC" -std=c11 -Wall -Wextra -Werror $SAN_FLAGS -o "$WORK/consumer_pc" \
    "$SOURCE/tests/install/consumer.c" $pcflags -Wl,-rpath,"$pclib"; then
  run_consumer pkg-config "$WORK/consumer_pc" 1
else
  fail "the consumer does not build with pkg-config"
fi

# ---- find_package(fastsmt)
if "$CMAKE" -S "$SOURCE/tests/install/consumer" -B "$WORK/cmake" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$SAN_FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="$SAN_FLAGS" >"$WORK/cmake.log" 2>&1 &&
   "$CMAKE" --build "$WORK/cmake" >>"$WORK/cmake.log" 2>&1; then
  found=$(sed -n 's/^fastsmt_DIR:PATH=//p' "$WORK/cmake/CMakeCache.txt")
  [ "$found" = "$prefix/$libdir/cmake/fastsmt" ] || fail "find_package found $found"
  run_consumer find_package-shared "$WORK/cmake/consumer_shared" 1
  run_consumer find_package-static "$WORK/cmake/consumer_static" 0
else
  cat "$WORK/cmake.log"; fail "the consumer does not build with find_package(fastsmt)"
fi

[ "$fails" -eq 0 ] && echo "install test: all passed"
[ "$fails" -eq 0 ]
