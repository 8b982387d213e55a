#!/bin/sh
# deb_test.sh — `cpack -G DEB` from the build tree makes fastsmt_VERSION_ARCH.deb; checks its control
# fields (name, version, the Debian libraries in Depends), its contents, then unpacks it into a
# scratch root (dpkg -x) and runs its tools from there: every --help, and the README's sample
# translation, which must equal the build tree's fastsmt's (1-best and 100-best list).
# ctest label install; skipped (77) in a sanitizer build (its programs need the sanitizer runtimes:
# not a package to ship) and without dpkg-deb (not a Debian system).
# Environment (set by ctest): BUILD SOURCE WORK VERSION TOOLS MAN (1: man pages expected) SANITIZE
# CPACK SERVER (1: fastsmt has --server, which links libmicrohttpd, xmlrpc-c and Jansson).
set -u
: "${BUILD:?}" "${SOURCE:?}" "${WORK:?}" "${VERSION:?}" "${TOOLS:?}" "${CPACK:?}"
MAN=${MAN:-0} SANITIZE=${SANITIZE:-} SERVER=${SERVER:-0}
if [ -n "$SANITIZE" ]; then
  echo "skipped: a sanitizer build (-DFASTSMT_SANITIZE=$SANITIZE) makes no .deb to ship"; exit 77
fi
command -v dpkg-deb >/dev/null 2>&1 || { echo "skipped: no dpkg-deb (not a Debian system)"; exit 77; }
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
die() { echo "FAIL $*"; exit 1; }

rm -rf "$WORK" && mkdir -p "$WORK" || die "cannot make $WORK"
(cd "$WORK" && "$CPACK" --config "$BUILD/CPackConfig.cmake" -G DEB -B "$WORK") >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log"; die "cpack -G DEB"; }
deb=$(ls "$WORK"/fastsmt_*.deb 2>/dev/null)
[ -f "$deb" ] || { cat "$WORK/cpack.log"; die "cpack made no fastsmt_*.deb"; }
echo "made $(basename "$deb")"

# ---- control fields
[ "$(dpkg-deb -f "$deb" Package)" = fastsmt ] || fail "Package: $(dpkg-deb -f "$deb" Package)"
[ "$(dpkg-deb -f "$deb" Version)" = "$VERSION" ] || fail "Version: $(dpkg-deb -f "$deb" Version)"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
server_deps=""
[ "$SERVER" = 1 ] && server_deps="libmicrohttpd12 libxmlrpc-core-c3 libjansson4"
for d in libc6 zlib1g liblzma5 libbz2-1.0 libzstd1 $server_deps; do
  echo ", $depends," | grep -q ", $d[ ,]" || fail "Depends lacks $d"
done

# ---- contents
dpkg-deb -c "$deb" | awk '{print $6}' >"$WORK/contents"
for f in usr/include/fastsmt/glm.h usr/include/fastsmt/decoder.h usr/lib/pkgconfig/fastsmt.pc \
         usr/lib/libfastsmt.a usr/lib/cmake/fastsmt/fastsmtConfig.cmake; do
  grep -qx "\./$f" "$WORK/contents" || fail "not in the package: /$f"
done
grep -q '^\./usr/lib/libfastsmt\.so\.[0-9]*$' "$WORK/contents" || fail "no /usr/lib/libfastsmt.so.N"
for t in $TOOLS; do
  grep -qx "\./usr/bin/$t" "$WORK/contents" || fail "not in the package: /usr/bin/$t"
  if [ "$MAN" = 1 ]; then
    grep -qx "\./usr/share/man/man1/$t\.1\(\.gz\)\{0,1\}" "$WORK/contents" ||
      fail "no man page /usr/share/man/man1/$t.1"
  fi
done

# ---- its tools, run from a scratch root
root="$WORK/root"
dpkg -x "$deb" "$root" || die "dpkg -x $deb"
for t in $TOOLS; do
  "$root/usr/bin/$t" --help >/dev/null || fail "$t --help from the package: exit status $?"
done
case " $TOOLS " in
  *" fastsmt "*)
    sample="$SOURCE/examples/sample"
    for who in package tree; do
      if [ $who = package ]; then prog="$root/usr/bin/fastsmt"; else prog="$BUILD/bin/fastsmt"; fi
      mkdir -p "$WORK/$who"
      XDG_CACHE_HOME="$WORK/$who/cache" "$prog" -f "$sample/moses.ini" -threads 2 \
        -n-best-list "$WORK/$who/sample.nbest" 100 distinct <"$sample/sample.es" \
        >"$WORK/$who/sample.out" 2>"$WORK/$who/sample.err" ||
        { cat "$WORK/$who/sample.err"; fail "$who fastsmt: the sample translation failed"; }
    done
    [ -s "$WORK/package/sample.out" ] || fail "the package's fastsmt printed nothing"
    cmp "$WORK/package/sample.out" "$WORK/tree/sample.out" &&
      cmp "$WORK/package/sample.nbest" "$WORK/tree/sample.nbest" &&
      echo "ok the package's fastsmt translates the sample as the build tree's does" ||
      fail "the package's fastsmt translates the sample differently"
    ;;
esac

[ "$fails" -eq 0 ] && echo "deb test: all passed"
[ "$fails" -eq 0 ]
