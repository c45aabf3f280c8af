#!/usr/bin/env bash
# dups.sh: the duplicates tool's whole-tree count with Go import groups
# passed over, as the tool documents for import lines.
#
# The tool skips single-line imports but reads the quoted paths inside an
# `import ( ... )` group as code, so two test files that happen to import
# the same six standard packages count as a duplicated pair. This script
# copies the tracked tree to a temporary directory, rewrites each import
# group as one `import "path"` line per entry (what the tool passes over;
# nothing else changes, line numbers shift by the group's two brace
# lines), and runs the tool there. Extra arguments go to the tool
# (e.g. --most 200). The raw count is `duplicates --most 200` at the top.
set -euo pipefail
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$top" ls-files -z --cached --others --exclude-standard |
	(cd "$top" && xargs -0 cp --parents -t "$tmp" 2>/dev/null || true)
find "$tmp" -name '*.go' -print0 | while IFS= read -r -d '' f; do
	awk '/^import \($/ { g = 1; next }
	     g && /^\)$/ { g = 0; next }
	     g { if ($0 ~ /^[ \t]*$/) print ""; else print "import " $0; next }
	     { print }' "$f" >"$f.flat" && mv "$f.flat" "$f"
done
cd "$tmp"
git init -q . && git add -A && git -c user.email=dups@localhost -c user.name=dups commit -qm tree
duplicates --seconds 500 "$@"
