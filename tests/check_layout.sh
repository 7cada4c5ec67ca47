#!/bin/sh
# Checks the include structure of the source tree from its #include "..." lines:
#  - no cycle between folders (a folder's files include another folder's headers only if that
#    folder's files, directly or through others, never include the first folder's);
#  - nothing under kernels/, reference/ or oracles/ includes a header of the harness (fuzz/,
#    reports/): kernels are built without the harness, and the reference and oracles are pure;
#  - a header named *_int.h is included only from files in its own folder.
# Prints each violation with the file that causes it and exits 1 if there is one.
# Usage: check_layout.sh [SOURCE_DIR]
cd "${1:-$(dirname "$0")/..}" || exit 2
find fuzz reports kernels oracles reference -type f \
     \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null | sort |
while read -r f; do
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
  while read -r inc; do
    # An include names a path from the top of the tree, or a file beside the includer.
    [ -f "$inc" ] || inc="$(dirname "$f")/$inc"
    [ -f "$inc" ] && printf '%s %s\n' "$f" "$inc"
  done
done | awk '
function dir(p) { sub(/\/[^\/]*$/, "", p); return p }
{
  from = dir($1); to = dir($2)
  if ($2 ~ /_int\.h$/ && from != to)
    bad[++nb] = $1 " includes " $2 ", internal to " to "/"
  if ($1 ~ /^(kernels|reference|oracles)\// && $2 ~ /^(fuzz|reports)\//)
    bad[++nb] = $1 " includes the harness header " $2
  if (from != to && !((from, to) in edge)) {
    edge[from, to] = $1 " includes " $2
    reach[from, to] = 1
    node[from] = 1; node[to] = 1
  }
}
END {
  for (k in node) for (i in node) if ((i, k) in reach) for (j in node) if ((k, j) in reach)
    reach[i, j] = 1
  for (e in edge) {
    split(e, p, SUBSEP)
    if ((p[2], p[1]) in reach)
      bad[++nb] = "cycle between " p[1] "/ and " p[2] "/: " edge[e]
  }
  for (i = 1; i <= nb; i++) print "layout: " bad[i]
  n = 0; for (k in node) n++
  if (nb) exit 1
  printf "layout: %d folders, no cycle, no harness header in kernels/reference/oracles, no foreign *_int.h\n", n
}'
