#!/bin/sh
# help_test.sh BINDIR MANDIR TOOL... — every tool's --help exits 0, prints its usage on stdout
# (starting with "usage") and nothing on stderr; when MANDIR is not empty (help2man was found), the
# tool's man page there is at least as new as the tool and holds every word of --help (troff escapes
# and fonts undone), so the page and --help cannot drift apart.
set -u
bin=$1 man=$2
shift 2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
for t in "$@"; do
  if ! "$bin/$t" --help >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL $t --help: exit status $? (want 0)"; fails=$((fails + 1)); continue
  fi
  if ! head -n 1 "$tmp/out" | grep -q '^usage'; then
    echo "FAIL $t --help: stdout does not start with the usage:"; head -n 3 "$tmp/out"
    fails=$((fails + 1))
  fi
  if [ -s "$tmp/err" ]; then
    echo "FAIL $t --help wrote to stderr:"; cat "$tmp/err"; fails=$((fails + 1))
  fi
  [ -n "$man" ] || continue
  page="$man/$t.1"
  if [ ! -f "$page" ]; then
    echo "FAIL $t: no man page $page"; fails=$((fails + 1)); continue
  fi
  if [ "$bin/$t" -nt "$page" ]; then
    echo "FAIL $t: $page is older than the tool"; fails=$((fails + 1))
  fi
  sed -e 's/^\.S[SH] "\(.*\)"$/\1/' -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" \
      -e 's/\\(dq/"/g' -e 's/\\&//g' -e 's/\\[,\/]//g' -e 's/\\e/\\/g' "$page" | tr -s ' \t' '\n\n' >"$tmp/page"
  tr -s ' \t' '\n\n' <"$tmp/out" | sort -u | while IFS= read -r w; do
    [ -z "$w" ] || grep -qxF -- "$w" "$tmp/page" || echo "$w"
  done >"$tmp/missing"
  if [ -s "$tmp/missing" ]; then
    echo "FAIL $t: words of --help missing from $page:"; cat "$tmp/missing"; fails=$((fails + 1))
  fi
  echo "ok $t"
done
[ "$fails" -eq 0 ]
