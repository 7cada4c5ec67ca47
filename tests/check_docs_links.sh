#!/bin/sh
# Checks the relative links of README.md and docs/**/*.md: each [text](target) outside code
# spans and fenced blocks names a file or directory that exists, and a target with #anchor (or a
# bare #anchor, into the same file) names a heading of that Markdown file, by GitHub's slug rules
# (lowercase; punctuation dropped but '-' and '_'; each space a '-'; a repeated heading gets -1,
# -2, ...). Links with a scheme (https:, mailto:) are not checked. Prints each broken link with its
# file and line, and exits 1 when there is one; 77 (skipped) without python3.
# Usage: check_docs_links.sh SOURCE_DIR
root="${1:-.}"
command -v python3 >/dev/null 2>&1 || { echo "docs_links: no python3, skipped" >&2; exit 77; }
exec python3 - "$root" <<'EOF'
import os, re, sys, unicodedata

root = sys.argv[1]
files = [os.path.join(root, "README.md")]
for d, _, names in os.walk(os.path.join(root, "docs")):
    files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")


def slug(text):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"`([^`]*)`", r"\1", text)                 # code spans keep their text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)     # links keep their text
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML goes
    out = []
    for ch in text.strip().lower():
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def lines_outside_code(path):
    """(line number, text with code spans blanked) of the lines outside fenced blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen, found = {}, set()
        for _, line in lines_outside_code(path):
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else "%s-%d" % (base, k))
        anchors_cache[path] = found
    return anchors_cache[path]


broken = 0
checked = 0
for path in files:
    for n, line in lines_outside_code(path):
        text = re.sub(r"``[^`]*``|`[^`]*`", lambda m: " " * len(m.group(0)), line)
        for m in LINK.finditer(text):
            target = m.group(1)
            if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            checked += 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = "%s:%d" % (os.path.relpath(path, root), n)
            if not os.path.exists(dest):
                print("%s: broken link %s: no file %s" % (where, target, os.path.relpath(dest, root)))
                broken += 1
            elif anchor:
                if os.path.isdir(dest) or not dest.endswith(".md"):
                    print("%s: broken link %s: an anchor into a file that is not Markdown" % (where, target))
                    broken += 1
                elif anchor not in anchors(dest):
                    print("%s: broken link %s: %s has no heading #%s" % (where, target, os.path.relpath(dest, root), anchor))
                    broken += 1

print("docs_links: %d relative links in %d files, %d broken" % (checked, len(files), broken))
sys.exit(1 if broken else 0)
EOF
