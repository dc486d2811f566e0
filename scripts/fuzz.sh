#!/usr/bin/env bash
# Runs every fuzz target of the module for a short time (default 3s each).
set -euo pipefail
t=${1:-3s}
cd "$(dirname "$0")/.."
found=0
while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for fn in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)' "$file" | awk '{print $2}'); do
		found=$((found + 1))
		echo "fuzz: $pkg $fn ($t)"
		go test -run='^$' -fuzz="^${fn}\$" -fuzztime="$t" "$pkg" >/tmp/dmg-fuzz.log 2>&1 || { cat /tmp/dmg-fuzz.log; exit 1; }
	done
done < <(git ls-files '*_test.go' 2>/dev/null | xargs grep -l '^func Fuzz' || true)
echo "fuzz: $found targets passed"
