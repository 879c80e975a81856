#!/bin/sh
# encoder-ab.sh REF ROUNDS MODEL: hybridbench encoder-gate built from this
# tree and from commit REF (in a temporary worktree), run alternately ROUNDS
# times each on MODEL; prints each run's gate table with the load average.
set -eu
ref=$1 rounds=$2 model=$3
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/ref" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/ref" "$ref" >/dev/null
(cd "$tmp/ref" && go build -o "$tmp/hb-ref" ./bench/cmd/hybridbench)
go build -o "$tmp/hb-new" ./bench/cmd/hybridbench
echo "ref: $ref ($(git rev-parse --short "$ref")), new: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo '+changes')"
i=1
while [ "$i" -le "$rounds" ]; do
	for side in ref new; do
		echo "== $side round $i: $(uptime)"
		"$tmp/hb-$side" encoder-gate -model "$model" || true
	done
	i=$((i + 1))
done
