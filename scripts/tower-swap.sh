#!/usr/bin/env bash
# tower 0.5.3's own test suite, run with pinfold's FuturesUnordered in place of futures-util's:
# the import swap the README promises, on a crate that implements a trait of its own for the
# set (`Drive`, whose methods call `FuturesUnordered::push(self, f)` and
# `FuturesUnordered::is_empty(self)`).
#
# Fetches tower's crates.io package, copies it to $CARGO_TARGET_DIR/tower-swap (target/ by
# default), points `ready_cache/cache.rs` and `util/call_all/unordered.rs` at
# pinfold_unordered::FuturesUnordered, adds a path dependency on crates/unordered, and runs
# `cargo test --features full` there. Prints the passed and failed counts; exits non-zero if a
# test failed or a test binary did not finish.
#
# Usage: scripts/tower-swap.sh [PINFOLD_CHECKOUT]   (default: this checkout)
set -euo pipefail

version=0.5.3
root=$(cd "$(dirname "$0")/.." && pwd)
pinfold=$(cd "${1:-$root}" && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
fetch=$target/tower-fetch
work=$target/tower-swap

# A scratch package depending on tower, so that cargo downloads and unpacks its package.
mkdir -p "$fetch/src"
cat >"$fetch/Cargo.toml" <<TOML
[package]
name = "tower-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
tower = { version = "=$version", features = ["full"] }

[workspace]
TOML
: >"$fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$fetch/Cargo.toml"
source=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tower-$version | head -n 1)

rm -rf "$work"
cp -r "$source" "$work"
chmod -R u+w "$work"
# The package's lock pins the oldest versions its manifest allows (tracing 0.1.9, which lacks
# what tower's tracing code uses). scripts/tower-swap.lock holds versions resolved afresh, as a
# user's build would, kept so that a new release of one of them cannot change the run; cargo
# adjusts it where pinfold's own dependencies changed.
cp "$root/scripts/tower-swap.lock" "$work/Cargo.lock"

# The two imports of futures-util's set, and nothing else.
swap() {
    local file=$work/src/$1 from=$2 to=$3
    grep -qF "$from" "$file" || { echo "tower-swap: $1 no longer has: $from" >&2; exit 1; }
    sed -i "s|$from|$to|" "$file"
}
swap ready_cache/cache.rs \
    'use futures_util::{stream::FuturesUnordered, task::AtomicWaker};' \
    'use futures_util::task::AtomicWaker;\nuse pinfold_unordered::FuturesUnordered;'
swap util/call_all/unordered.rs \
    'use futures_util::stream::FuturesUnordered;' \
    'use pinfold_unordered::FuturesUnordered;'
if grep -rn 'stream::FuturesUnordered' "$work/src"; then
    echo "tower-swap: futures-util's FuturesUnordered is still used" >&2
    exit 1
fi

cat >>"$work/Cargo.toml" <<TOML

[dependencies.pinfold-unordered]
path = "$pinfold/crates/unordered"

[workspace]
TOML

cd "$work"
log=$work/test.log
status=0
cargo test --features full --no-fail-fast 2>&1 | tee "$log" || status=$?
passed=$(grep -Eo '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s += $1} END {print s + 0}')
aborted=$(grep -c "process didn't exit successfully" "$log" || true)
echo "tower $version with pinfold's FuturesUnordered: $passed passed, $failed failed," \
    "$aborted test binaries did not finish"
exit "$status"
