#!/usr/bin/env bash
# Build kli-scan (native/kli-scan), search's native first pass, offline from Debian's packaged
# crates (the crates of Debian's ripgrep: librust-*-dev, in /usr/share/cargo/registry; see
# native/kli-scan/.cargo/config.toml), and install it atomically as tools/file/native/kli-scan,
# where the package finds it (kli.tools.file.firstpass.binaries). Without it search and ws_grep use rg.
#   native/build.sh            build (cargo must be on PATH or in ~/.cargo/bin)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cargo="$(command -v cargo || true)"
[ -z "$cargo" ] && [ -x "$HOME/.cargo/bin/cargo" ] && cargo="$HOME/.cargo/bin/cargo"
if [ -z "$cargo" ]; then
  echo "native/build.sh: cargo not found (apt-get install cargo)" >&2
  exit 1
fi
target="${CARGO_TARGET_DIR:-$here/kli-scan/target}"
(cd "$here/kli-scan" && CARGO_TARGET_DIR="$target" "$cargo" build --release --offline --quiet)
out="$root/tools/file/native"
mkdir -p "$out"
tmp="$(mktemp "$out/.kli-scan.XXXXXX")"
trap 'rm -f "$tmp"' EXIT  # a failed copy leaves no temporary file beside the binary
cp "$target/release/kli-scan" "$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$out/kli-scan"
