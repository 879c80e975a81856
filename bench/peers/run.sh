#!/bin/sh
# bench/peers/run.sh: cairn's index/ (and whole vecstore) against hnswlib
# (native C++ and Debian's Python module), faiss IndexHNSWFlat and IndexHNSWSQ
# (8-bit), coder/hnsw v0.6.1 and an exact scan, on the same seeded data, in
# one run. Installs nothing: it checks the prerequisites and says what is
# missing (make bench-index-deps installs them).
#
# Usage (from the repository root):
#   bench/peers/run.sh [indexbench flags...]
#   bench/peers/run.sh -mem 1000000          # memory/build/query at 1M
# Environment: CACHE (data and results, default ~/.cache/cairn-bench/index),
#              PYTHON (default /usr/bin/python3), CXX (default g++).
set -eu

cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-/usr/bin/python3}
CXX=${CXX:-g++}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-bench/index}

missing=""
command -v go >/dev/null 2>&1 || missing="$missing go"
command -v "$CXX" >/dev/null 2>&1 || missing="$missing $CXX(g++)"
[ -f /usr/include/hnswlib/hnswlib.h ] || missing="$missing libhnswlib-dev"
if [ -x "$PYTHON" ]; then
	for mod in numpy hnswlib faiss; do
		"$PYTHON" -c "import $mod" >/dev/null 2>&1 || missing="$missing python3-$mod"
	done
else
	missing="$missing $PYTHON"
fi
if [ -n "$missing" ]; then
	echo "bench/peers/run.sh: missing:$missing" >&2
	echo "install them on Debian with: make bench-index-deps" >&2
	echo "  (bench/peers/install-debs.sh: simulates with apt-get -s first and refuses if anything would be removed)" >&2
	exit 2
fi

mkdir -p "$CACHE"
NATIVE="$CACHE/hnswlib_native"
if [ ! -x "$NATIVE" ] || [ bench/peers/hnswlib_native.cpp -nt "$NATIVE" ]; then
	echo "building $NATIVE (-O3 -march=native)" >&2
	"$CXX" -O3 -march=native -std=c++17 -pthread -w -o "$NATIVE" bench/peers/hnswlib_native.cpp
fi

echo "$(date -u +%FT%TZ) $(go version) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) nproc=$(nproc)" >&2
exec go run ./bench/cmd/indexbench -cache "$CACHE" -native "$NATIVE" -python "$PYTHON" -peers-dir bench/peers "$@"
