#!/usr/bin/python3
"""suite_equal.py A.json B.json A.xml B.xml — exit 0 when two suite results (and their JUnit
files) are equal apart from timings: the result's started and seconds, each case's seconds,
time_us and phase_seconds; the JUnit time and timestamp attributes. Prints the first difference
otherwise."""
import json
import re
import sys

TIMINGS = {"started", "seconds", "time_us", "phase_seconds"}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in TIMINGS}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def first_diff(a, b, where="$"):
    if type(a) is not type(b):
        return f"{where}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'the second' if k in b else 'the first'}"
            d = first_diff(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} entries != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{where}: {a!r} != {b!r}"


def junit(path):
    with open(path, encoding="utf-8") as f:
        return re.sub(r'\s(time|timestamp)="[^"]*"', "", f.read())


def main():
    ja, jb, xa, xb = sys.argv[1:5]
    with open(ja, encoding="utf-8") as f:
        a = strip(json.load(f))
    with open(jb, encoding="utf-8") as f:
        b = strip(json.load(f))
    d = first_diff(a, b)
    if d:
        print(f"{ja} and {jb} differ: {d}")
        return 1
    if junit(xa) != junit(xb):
        la, lb = junit(xa).splitlines(), junit(xb).splitlines()
        for i, (x, y) in enumerate(zip(la, lb)):
            if x != y:
                print(f"{xa} and {xb} differ at line {i + 1}:\n  {x}\n  {y}")
                return 1
        print(f"{xa} and {xb} differ in length")
        return 1
    print(f"equal apart from timings: {ja} {jb} {xa} {xb}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
