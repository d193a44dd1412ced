#!/usr/bin/env bash
# Runs every go test -fuzz target in the module for FUZZTIME each (default
# 30s). New failing inputs land in the package's testdata/fuzz/ directory;
# commit them as regression cases once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-30s}"
grep -rl --include='*_test.go' '^func Fuzz' internal client cmd 2>/dev/null | sort | while read -r f; do
	pkg="./$(dirname "$f")"
	for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
		echo "== $pkg $fn ($FUZZTIME)"
		go test "$pkg" -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME"
	done
done
