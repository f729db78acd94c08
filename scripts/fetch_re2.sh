#!/usr/bin/env bash
# scripts/fetch_re2.sh [DIR] — RE2's sources for the builds that cannot use Debian's libre2
# (wasm and aarch64 compile it themselves; native builds link libre2-dev). Puts Debian 12's
# source package re2 20220601+dfsg (its .orig tarball and debian/ patches, from Debian's
# archive, checked against the digests its .dsc lists) into DIR (default build/_deps/re2), and
# generates the three Unicode tables Debian's repack leaves out (debian/copyright:
# Files-Excluded) with RE2's own scripts from Debian's unicode-data, as Debian's build does.
# Idempotent: a complete DIR is left alone. Needs curl, xz-utils, patch, perl, python3-six
# and unicode-data (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-build/_deps/re2}
[ -f "$dir/re2/unicode_groups.cc" ] && exit 0

pool=http://deb.debian.org/debian/pool/main/r/re2
# The digests Debian's re2_20220601+dfsg-1.dsc lists for its two tarballs.
orig=re2_20220601+dfsg.orig.tar.xz
orig_sha256=3bc61251da3b0b97be40a8a127818c517c62516e4eda11fc901d29496663df54
debian=re2_20220601+dfsg-1.debian.tar.xz
debian_sha256=6e93860fc6d5a7bc94f0cb235f107545a332e6cd37c3a4060982b9caa47a2570

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$orig $orig_sha256" "$debian $debian_sha256"; do
  set -- $f
  curl -fsSL --retry 3 -o "$tmp/$1" "$pool/$1"
  echo "$2  $tmp/$1" | sha256sum -c --quiet - || {
    echo "fetch_re2: $1 does not match the digest of Debian's .dsc" >&2
    exit 1
  }
done

src=$tmp/src
mkdir -p "$src"
tar -xJf "$tmp/$orig" -C "$src" --strip-components=1
tar -xJf "$tmp/$debian" -C "$src"
# Debian's patches (the series order): its Unicode data instead of unicode.org's.
while read -r p; do
  [ -n "$p" ] && patch -s -d "$src" -p1 < "$src/debian/patches/$p"
done < "$src/debian/patches/series"
(
  cd "$src/re2"
  perl make_perl_groups.pl > perl_groups.cc
  python3 make_unicode_casefold.py > unicode_casefold.cc
  python3 make_unicode_groups.py > unicode_groups.cc
)
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
mv "$src" "$dir"
echo "fetch_re2: re2 20220601+dfsg in $dir"
