#!/usr/bin/env bash
# Fetches the sources of the three codecs the WebAssembly build compiles itself (zstd, lz4,
# libdeflate) with `apt-get source`, from Debian's own archive, into wasm/third_party/ (ignored by
# git). Emscripten's ports download from elsewhere at build time; this build downloads nothing.
#
#   wasm/fetch-codec-sources.sh [DEST]     (default DEST: wasm/third_party in this checkout)
#
# The versions are pinned to bookworm's, so every machine compiles the same code. zstd is named by
# the version whose source the main archive carries (the security archive's newer binary has no
# source there). Needs a deb-src entry for the main archive: one is added (as its own file under
# /etc/apt/sources.list.d/) when apt has none. Safe to run again: a source already unpacked is
# kept.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:-$here/third_party}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"

# package=version  directory apt-get source unpacks it to
sources=("libzstd=1.5.4+dfsg2-5 libzstd-1.5.4+dfsg2"
         "lz4=1.9.4-1 lz4-1.9.4"
         "libdeflate=1.14-1 libdeflate-1.14")

missing=()
for entry in "${sources[@]}"; do
  read -r spec dir <<<"$entry"
  [ -f "$dest/$dir/.fourdgs-complete" ] || missing+=("$spec")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
if ! apt-get source --print-uris lz4=1.9.4-1 >/dev/null 2>&1; then
  if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "adding a deb-src entry: /etc/apt/sources.list.d/fourdgs-deb-src.sources" >&2
    $sudo_cmd tee /etc/apt/sources.list.d/fourdgs-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  $sudo_cmd apt-get update -qq
fi
# dpkg-source (dpkg-dev) unpacks and patches what apt-get source downloads.
command -v dpkg-source >/dev/null || DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null

cd "$dest"
for entry in "${sources[@]}"; do
  read -r spec dir <<<"$entry"
  [ -f "$dir/.fourdgs-complete" ] && continue
  rm -rf "$dir"
  apt-get source -qq "$spec" >/dev/null 2>&1 || apt-get source -q "$spec"
  [ -d "$dir" ] || { echo "apt-get source $spec did not unpack $dir" >&2; exit 1; }
  touch "$dir/.fourdgs-complete"
done
echo "codec sources in $dest" >&2
