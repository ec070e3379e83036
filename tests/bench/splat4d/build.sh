#!/bin/sh
# Builds splat4d (github adamraudonis/splats4D, its Rust converter: encode,
# decode, verify) offline, against Debian's librust-*-dev crates through a
# cargo directory source, for tests/bench/bench_vs_splat4d.py. Nothing of
# splat4d is kept in this repository.
#
#   tests/bench/splat4d/build.sh SRC_DIR BUILD_DIR
#
# SRC_DIR is a checkout of the repository (the benchmark used commit
# bf7c41ac2ef59a311899887bd7e032239b819829); BUILD_DIR a scratch directory
# outside this repository. Prints the path of the built binary.
#
# Needs: rustc >= 1.73 (the rustup toolchain in ~/.cargo/bin; Debian 12's
# 1.63 is too old) and
#   apt-get install -y librust-zstd-dev librust-clap-dev librust-rayon-dev \
#     librust-serde-json-dev librust-anyhow-dev librust-serde-dev \
#     librust-serde-derive-dev
#
# Three edits, made to a copy of the sources, for Debian's zstd crate 0.12.1
# (splat4d asks for 0.13 with the "zstdmt" feature; Debian's crate links the
# system libzstd, which is built multithreaded, and drops that feature):
#   1. Cargo.toml: zstd version "0.13" -> "0.12".
#   2. Cargo.toml: features = ["zstdmt"] removed.
#   3. src/streams.rs: enc.multithread(n)? -> enc.set_parameter(
#      zstd::zstd_safe::CParameter::NbWorkers(n))? (Encoder::multithread
#      exists only under "zstdmt"; the parameter it sets does not).
# Cargo.lock is removed too: it pins crates.io versions Debian lacks.
set -eu
src=$1
out=$2
mkdir -p "$out"
rm -rf "$out/converter"
cp -r "$src/converter" "$out/converter"
cd "$out/converter"
rm -f Cargo.lock
sed -i 's/^zstd = { version = "0.13", features = \["zstdmt"\] }/zstd = { version = "0.12" }/' Cargo.toml
grep -q '^zstd = { version = "0.12" }$' Cargo.toml
sed -i 's/enc\.multithread(\(.*\))?;/enc.set_parameter(zstd::zstd_safe::CParameter::NbWorkers(\1))?;/' src/streams.rs
grep -q 'CParameter::NbWorkers(rayon::current_num_threads() as u32))?;' src/streams.rs
mkdir -p .cargo
cat > .cargo/config.toml <<'CFG'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
CFG
PATH=$HOME/.cargo/bin:$PATH
export CARGO_TARGET_DIR="$out/target"
nice -n 10 cargo build --release -j2 >&2
echo "$out/target/release/splat4d"
