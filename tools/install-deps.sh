#!/bin/sh
# install-deps.sh — installs the Debian packages fastsmt needs that are missing; the one set-up step
# of the README's two commands and of .ci/run.
#   tools/install-deps.sh            what building the library and the tools needs
#   tools/install-deps.sh --tests    also what the tests need (Criterion; Python for the package,
#                                    Dask and pandas for fastsmt.dask; help2man for the man pages,
#                                    dpkg-dev and file for the .deb's dependencies: install tests;
#                                    Open MPI for the tests over MPI ranks; Chromium for the
#                                    server page's test)
#   tools/install-deps.sh --tests PKG...   and further packages (CI: clang for the fuzzers)
# Installs only what dpkg does not list as installed (apt-get update once, then apt-get install): as
# root directly, otherwise through sudo when there is one; else it prints what to install and fails.
set -eu

packages="cmake make gcc pkg-config zlib1g-dev libxxhash-dev liblzma-dev libbz2-dev libzstd-dev libmicrohttpd-dev libxmlrpc-core-c3-dev libjansson-dev"
for arg in "$@"; do
  case "$arg" in
    --tests) packages="$packages libcriterion-dev python3-dev python3-pytest python3-venv python3-pip python3-numpy python3-dask python3-distributed python3-pandas help2man dpkg-dev file libopenmpi-dev openmpi-bin chromium" ;;
    -h|--help)
      sed -n '2,12s/^# \{0,1\}//p' "$0"
      exit 0 ;;
    -*) echo "install-deps.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) packages="$packages $arg" ;;
  esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps.sh: not a Debian system (no dpkg-query); install the equivalents of: $packages" >&2
  exit 1
fi

missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1; then
  as_root="sudo"
else
  echo "install-deps.sh: missing Debian packages:$missing" >&2
  echo "install-deps.sh: not root and no sudo; as root run: apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
echo "install-deps.sh: installing$missing"
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086 # one word per package
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
