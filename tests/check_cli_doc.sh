#!/bin/sh
# Checks that docs/cli.md is what the flag tables of fuzz/cli/ generate (`ggfuzz --help-markdown`):
# prints the difference and the command that regenerates it, and exits 1, when it is not.
# Usage: check_cli_doc.sh GGFUZZ DOCS_CLI_MD
exe="$1"
doc="$2"
out="${TMPDIR:-/tmp}/ggfuzz-cli-doc-$$.md"
trap 'rm -f "$out"' EXIT
"$exe" --help-markdown > "$out" || { echo "cli_doc: $exe --help-markdown failed" >&2; exit 1; }
if ! diff -u "$doc" "$out"; then
  echo "cli_doc: $doc is not what the flag tables generate; regenerate it with:" >&2
  echo "  $exe --help-markdown > $doc" >&2
  exit 1
fi
echo "cli_doc: $doc is what the flag tables generate"
