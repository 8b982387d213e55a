#!/bin/bash
# make-sysroot.sh OUT — a small sysroot for building and testing fastsmt on the GPU machine, which
# has the CUDA toolkit but neither libxxhash nor Criterion and cannot download them: the headers,
# libcriterion.so.3 with the shared libraries it needs that are not part of glibc, libxxhash.so.0,
# and .pc files relative to themselves. Copied from this machine's Debian packages
# (libxxhash-dev, libcriterion-dev, and liblzma-dev, libbz2-dev, libzstd-dev for the line reader);
# ~13 MB. Use it there with
#   export PKG_CONFIG_PATH=$OUT/pkgconfig LD_LIBRARY_PATH=$OUT/lib CMAKE_PREFIX_PATH=$OUT
set -euo pipefail
out=${1:?usage: make-sysroot.sh OUT}
lib=/usr/lib/x86_64-linux-gnu
mkdir -p "$out/include" "$out/lib" "$out/pkgconfig"
cp -r /usr/include/criterion "$out/include/"
cp /usr/include/xxhash.h /usr/include/xxh3.h "$out/include/"
cp -r /usr/include/lzma /usr/include/lzma.h /usr/include/bzlib.h /usr/include/zstd.h \
    /usr/include/zstd_errors.h "$out/include/"
cp -L "$lib/libcriterion.so.3" "$lib/libxxhash.so.0" "$lib/liblzma.so.5" "$lib/libbz2.so.1.0" \
    "$lib/libzstd.so.1" "$out/lib/"
ln -sf libcriterion.so.3 "$out/lib/libcriterion.so"
ln -sf libxxhash.so.0 "$out/lib/libxxhash.so"
ln -sf liblzma.so.5 "$out/lib/liblzma.so"
ln -sf libbz2.so.1.0 "$out/lib/libbz2.so" # found by CMake's FindBZip2 through CMAKE_PREFIX_PATH
ln -sf libzstd.so.1 "$out/lib/libzstd.so"
# Criterion's dependencies, except glibc's own libraries (the machine has a newer glibc)
ldd "$lib/libcriterion.so.3" | awk '$3 ~ /^\// {print $3}' | while read -r so; do
    case "$(basename "$so")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|ld-linux*) ;;
    *) cp -L "$so" "$out/lib/" ;;
    esac
done
ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed 's/-.*//'; }
for p in "criterion criterion libcriterion-dev" "libxxhash xxhash libxxhash-dev" \
         "liblzma lzma liblzma-dev" "libzstd zstd libzstd-dev"; do
    set -- $p
    cat > "$out/pkgconfig/$1.pc" <<PC
prefix=\${pcfiledir}/..
Name: $2
Description: carried copy for the device run
Version: $(ver "$3")
Libs: -L\${prefix}/lib -l${2}
Cflags: -I\${prefix}/include
PC
done
du -sh "$out"
