#!/bin/sh
# test_install.sh SRC PYTHON CMAKE CC — ggfuzz as a team that installs it gets it (CTest test
# install, label cli). A copy of the source tree SRC is built and installed into a temporary
# prefix; the copy and its build are then deleted and the prefix moved, so that no source or
# build tree is left for the installed files to fall back on (the tree CTest runs from is not
# touched). From a directory of its own, the installed ggfuzz then
#   - runs the quick tier with the gate (exit 0),
#   - builds the example C plugin from its installed sources with find_package(ggfuzz), and
#     again with pkg-config's flags,
#   - finds the planted bug of the example C plugin and of the example Python plugin in short
#     campaigns, and replays each campaign's findings with --replay (exit 0),
#   - runs pytest on the installed example test file with the installed package (-p), and
#   - pip installs its Python package into a virtual environment, whose pytest loads the plugin
#     by itself and finds libggfuzz.so through the installed ggfuzz on PATH.
# PYTHON is an interpreter with NumPy and pytest, CMAKE and CC those of the build.
set -eu
SRC=$1 PYTHON=$2 CMAKE=$3 CC=$4
unset PYTHONPATH GGFUZZ_LIB GGFUZZ_PYTHONPATH GGFUZZ_PLUGINS GGFUZZ_EXE
export GGFUZZ_PYTHON="$PYTHON"
T=$(mktemp -d "${TMPDIR:-/tmp}/ggfuzz-install-XXXXXX")
trap 'rm -rf "$T"' EXIT
START=$(date +%s)
step() { printf '== [%ss] %s\n' "$(($(date +%s) - START))" "$*"; }
fail() { echo "test_install: $*" >&2; exit 1; }

step "build a copy of the source tree and install it"
mkdir "$T/src"
(cd "$SRC" && tar cf - --exclude=__pycache__ --exclude='*.egg-info' \
    --exclude=kernels/python/build CMakeLists.txt cmake corpus fuzz kernels oracles reference \
    reports) | (cd "$T/src" && tar xf -)
"$CMAKE" -S "$T/src" -B "$T/build" -DGG_BUILD_TESTS=OFF -DCMAKE_C_COMPILER="$CC" >"$T/log" 2>&1 ||
    { cat "$T/log"; fail "configure failed"; }
"$CMAKE" --build "$T/build" -j2 >"$T/log" 2>&1 || { tail -40 "$T/log"; fail "build failed"; }
"$CMAKE" --install "$T/build" --prefix "$T/staged" >"$T/log" 2>&1 ||
    { cat "$T/log"; fail "install failed"; }
rm -rf "$T/src" "$T/build"
mv "$T/staged" "$T/prefix"
P=$T/prefix
grep -q "$T/src" "$P/bin/ggfuzz" || fail "the binary does not name its (deleted) source tree"
for f in bin/ggfuzz lib/libggfuzz.so include/ggfuzz/gg_kernel.h \
         lib/cmake/ggfuzz/ggfuzzConfig.cmake share/pkgconfig/ggfuzz.pc \
         share/ggfuzz/python/ggfuzz/__main__.py \
         share/ggfuzz/python/pyproject.toml share/ggfuzz/corpus/suite/quick \
         share/ggfuzz/corpus/seeds share/ggfuzz/examples/c/example_plugin.c \
         share/ggfuzz/examples/python/test_numpy_grouped.py; do
    [ -e "$P/$f" ] || fail "$f was not installed"
done
mkdir "$T/work"
cd "$T/work"

step "ggfuzz suite --tier quick --gate"
"$P/bin/ggfuzz" suite --tier quick --gate >"$T/log" 2>&1 ||
    { cat "$T/log"; fail "the quick tier failed"; }
grep -q "gate: PASS" "$T/log" || { cat "$T/log"; fail "no gate line"; }
grep "^suite quick:" "$T/log"

step "the example C plugin with find_package(ggfuzz) and with pkg-config"
"$CMAKE" -S "$P/share/ggfuzz/examples/c" -B "$T/plugin" -DCMAKE_PREFIX_PATH="$P" \
    -DCMAKE_C_COMPILER="$CC" >"$T/log" 2>&1 && "$CMAKE" --build "$T/plugin" >>"$T/log" 2>&1 ||
    { cat "$T/log"; fail "the example plugin does not build against the installed package"; }
PLUGIN=$T/plugin/ggfuzz_example_plugin.so
CFLAGS=$(PKG_CONFIG_PATH="$P/share/pkgconfig" pkg-config --cflags ggfuzz)
"$CC" -std=c11 -O2 -fPIC -shared $CFLAGS "$P/share/ggfuzz/examples/c/example_plugin.c" \
    -o "$T/pc_plugin.so" || fail "the example plugin does not build with pkg-config --cflags ggfuzz"
"$P/bin/ggfuzz" --plugin "$T/pc_plugin.so" list | grep -q grouped_bf16_plugin_naive ||
    fail "the plugin built with pkg-config's flags does not list its kernel"

# campaign NAME PLUGIN KERNEL MUTANT: a short campaign that must find the mutant's bug, then the
# installed ggfuzz replays what it stored.
campaign() {
    rc=0
    "$P/bin/ggfuzz" --plugin "$2" fuzz "$T/$1/corpus" --kernel "$3" --mutant "$4" \
        --workers 1 --seed 1 --runs 40 --max-total-time 120 --artifacts "$T/$1/artifacts" \
        >"$T/log" 2>&1 || rc=$?
    [ "$rc" -ge 11 ] && [ "$rc" -le 19 ] ||
        { tail -30 "$T/log"; fail "$1: campaign exit $rc, not a finding"; }
    grep "^INFO: [0-9]* unique signatures" "$T/log"
    "$P/bin/ggfuzz" --plugin "$2" --replay "$T/$1/artifacts" >"$T/log" 2>&1 ||
        { tail -30 "$T/log"; fail "$1: the stored findings do not replay"; }
    tail -1 "$T/log"
}
step "C plugin: a campaign finds skip_last_k, --replay reproduces its findings"
campaign c "$PLUGIN" grouped_bf16_plugin_naive skip_last_k
step "Python plugin: a campaign finds empty_group_garbage, --replay reproduces its findings"
campaign py "$P/share/ggfuzz/examples/python/numpy_grouped.py" grouped_bf16_numpy_ref \
    empty_group_garbage

step "pytest on the installed example test file, the installed package on PYTHONPATH"
PYTHONPATH="$P/share/ggfuzz/python" "$PYTHON" -m pytest -p ggfuzz.pytest_plugin \
    -p no:cacheprovider -q "$P/share/ggfuzz/examples/python/test_numpy_grouped.py" \
    >"$T/log" 2>&1 ||
    { tail -40 "$T/log"; fail "pytest failed"; }
tail -1 "$T/log"

step "pip install PREFIX/share/ggfuzz/python into a venv; its pytest loads the plugin by itself"
"$PYTHON" -m venv --system-site-packages "$T/venv" >"$T/log" 2>&1 &&
    "$T/venv/bin/pip" install --no-build-isolation --no-index "$P/share/ggfuzz/python" \
        >>"$T/log" 2>&1 ||
    { cat "$T/log"; fail "pip install of the installed package failed (python3-venv, -pip)"; }
PATH="$P/bin:$PATH" "$T/venv/bin/python" -m pytest -p no:cacheprovider -q \
    "$P/share/ggfuzz/examples/python/test_numpy_grouped.py" >"$T/log" 2>&1 ||
    { tail -40 "$T/log"; fail "pytest in the venv failed"; }
tail -1 "$T/log"
step "done"
