#!/bin/sh
# Checks the include structure of the source tree from its #include "..." lines:
#  - the top-level folders include each other in one declared order, each only itself and the
#    folders before it: kernels/, reference/, oracles/, fuzz/, reports/, then the command line
#    (fuzz/cli/), which counts as a top-level folder of its own: it is the program, which runs
#    the rooms of fuzz/ and renders their results through reports/, and the fixed top level keeps
#    it under fuzz/. So the top level has no cycle, and nothing else under fuzz/ includes reports/;
#  - no cycle between folders (a folder's files include another folder's headers only if that
#    folder's files, directly or through others, never include the first folder's);
#  - nothing under kernels/, reference/ or oracles/ includes a header of the harness (fuzz/,
#    reports/): kernels are built without the harness, and the reference and oracles are pure;
#  - a header named *_int.h is included only from files in its own folder.
# Prints each violation with the file that causes it and exits 1 if there is one.
# Usage: check_layout.sh [SOURCE_DIR]
cd "${1:-$(dirname "$0")/..}" || exit 2
order="kernels reference oracles fuzz reports fuzz/cli"
find fuzz reports kernels oracles reference -type f \
     \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null | sort |
while read -r f; do
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
  while read -r inc; do
    # An include names a path from the top of the tree, or a file beside the includer.
    [ -f "$inc" ] || inc="$(dirname "$f")/$inc"
    [ -f "$inc" ] && printf '%s %s\n' "$f" "$inc"
  done
done | awk -v order="$order" '
function dir(p) { sub(/\/[^\/]*$/, "", p); return p }
# The top-level folder a file counts in: its first component, fuzz/cli/ apart.
function top(p) { if (p ~ /^fuzz\/cli\//) return "fuzz/cli"; sub(/\/.*$/, "", p); return p }
BEGIN { n_top = split(order, tops, " "); for (i = 1; i <= n_top; i++) rank[tops[i]] = i }
{
  from = dir($1); to = dir($2)
  tf = top($1); tt = top($2)
  if (!(tf in rank))
    bad[++nb] = $1 " is in " tf "/, which the declared order of top-level folders lacks"
  else if (!(tt in rank))
    bad[++nb] = $1 " includes " $2 " of " tt "/, which the declared order of top-level folders lacks"
  else if (rank[tt] > rank[tf])
    bad[++nb] = $1 " includes " $2 ": " tt "/ comes after " tf "/ in the order " order
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
  printf "layout: top level in the order %s; %d folders, no cycle, no harness header in kernels/reference/oracles, no foreign *_int.h\n", order, n
}'
