#!/bin/sh
# bench/peers/install-debs.sh: installs the Debian packages of the index peers
# (native hnswlib headers, Debian's hnswlib and faiss Python modules and numpy
# for /usr/bin/python3), and only if apt would remove or replace nothing.
#
# Idempotent: when every package is installed it says so and touches nothing.
# Otherwise it simulates the install (apt-get -s) with the same options it
# would use, refuses when the simulation removes any package or touches
# nodejs (the JS peers need the installed Node), and only then installs.
# Needs root (or sudo) for the install itself; the check runs as anyone.
#
# Usage: bench/peers/install-debs.sh [--check]   (--check: simulate only)
set -eu

PKGS="python3-hnswlib libhnswlib-dev python3-faiss python3-numpy"
APT_OPTS="--no-install-recommends -o Dpkg::Options::=--force-confold"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-debs: already installed: $PKGS"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

sim() {
	# shellcheck disable=SC2086
	apt-get -s install $APT_OPTS $missing 2>&1
}
out=$(sim) || {
	echo "install-debs: apt-get -s failed; refreshing the package lists" >&2
	$SUDO apt-get update -q >/dev/null
	out=$(sim) || { echo "$out" >&2; exit 1; }
}
echo "$out" | grep -E '^(Inst|Remv) ' >&2 || true
if echo "$out" | grep -q '^Remv '; then
	echo "install-debs: refused: apt would remove packages (lines 'Remv' above)" >&2
	exit 1
fi
if echo "$out" | grep -E '^(Inst|Remv) ' | grep -q 'nodejs'; then
	echo "install-debs: refused: apt would change nodejs" >&2
	exit 1
fi
if ! echo "$out" | grep -Eq ' 0 to remove'; then
	echo "install-debs: refused: the simulation did not report '0 to remove':" >&2
	echo "$out" | tail -5 >&2
	exit 1
fi
if [ "${1:-}" = "--check" ]; then
	echo "install-debs: would install:$missing (nothing removed)"
	exit 0
fi
node_before=$(node --version 2>/dev/null || echo none)
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $APT_OPTS $missing
node_after=$(node --version 2>/dev/null || echo none)
if [ "$node_before" != "$node_after" ]; then
	echo "install-debs: node changed: $node_before -> $node_after" >&2
	exit 1
fi
echo "install-debs: installed:$missing (node $node_after)"
