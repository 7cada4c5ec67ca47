"""A kernel's tests in Python: run it over case files (the seeds, a tier of the suite) or fuzz it
for a while, and fail the way a test fails. The pytest plugin (ggfuzz.pytest_plugin) is built on
run_cases(); a test calls fuzz() itself:

    import ggfuzz
    import my_kernels                  # the plugin file: importing it registers its kernels
    ggfuzz.fuzz(my_kernels.KERNEL, seconds=30)   # FuzzFailure (an AssertionError): the buckets

A kernel is a ggfuzz.Kernel (run through its plugin file, k.path), the name of one registered in
this process, or any kernel ggfuzz knows by name (in-tree, or of plugin=FILE: a .py or a .so).
Everything runs in a child process, `python -m ggfuzz [--plugin FILE] ...` (this interpreter,
this package, the libggfuzz.so it finds), so a kernel that crashes or hangs fails a test instead
of ending the test run. The commands printed to run a failure again use the ggfuzz executable of
that library where there is one."""

import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from . import _locate, kernel as _kernel

# Exit codes of ggfuzz (README, "Exit codes") that mean findings, not a harness failure.
_FINDING_CODES = set(range(11, 20)) | {21}


class HarnessError(RuntimeError):
    """ggfuzz could not do what was asked (a usage error, a refused plugin, nothing verified):
    not a finding of the kernel. The message ends with what ggfuzz printed last."""


class FuzzFailure(AssertionError):
    """A campaign found bugs. buckets: [{"id", "form", "path", "replay"}] (one per root cause),
    signatures: [{"signature", "path", "bucket"}] (every finding stored), artifacts: the findings
    store (kept), stats: fuzzer_stats as a dict, output: what the campaign printed."""

    def __init__(self, message, buckets, signatures, artifacts, stats, output):
        super().__init__(message)
        self.buckets, self.signatures, self.artifacts = buckets, signatures, artifacts
        self.stats, self.output = stats, output


def _kernel_and_plugin(kernel, plugin):
    """(name, plugin file or None) of kernel: a ggfuzz.Kernel, or a name."""
    if isinstance(kernel, _kernel.Kernel):
        name, path = kernel.name, kernel.path
        if path is None and plugin is None:
            raise ValueError("kernel %s was not registered by a plugin file (ggfuzz.register() "
                             "records it): give plugin=FILE" % name)
    elif isinstance(kernel, str) and kernel:
        name = kernel
        k = _kernel.registered.get(kernel)
        path = k.path if k is not None else None
    else:
        raise TypeError("a kernel is a ggfuzz.Kernel or a kernel's name, not %r" % (kernel,))
    plugin = plugin or path
    return name, os.path.abspath(plugin) if plugin else None


def _python_env():
    """The environment of `python -m ggfuzz` children: this package first on PYTHONPATH, the
    library it finds, this interpreter for the commands they print."""
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = env.get("PYTHONPATH", "")
    if pkg not in path.split(os.pathsep):
        env["PYTHONPATH"] = pkg + (os.pathsep + path if path else "")
    env["GGFUZZ_LIB"] = _locate.library()
    env.setdefault("GGFUZZ_PYTHON", sys.executable)
    return env


def _ggfuzz(plugin, args, timeout=None):
    """Runs `python -m ggfuzz [--plugin P] ARGS`: (exit code, stdout and stderr together)."""
    cmd = [sys.executable, "-m", "ggfuzz"] + (["--plugin", plugin] if plugin else []) + args
    p = subprocess.run(cmd, env=_python_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout)
    return p.returncode, p.stdout


def _tail(output, lines=20):
    return "\n".join(output.rstrip("\n").split("\n")[-lines:])


def command(plugin, args):
    """The shell command that runs `ggfuzz [--plugin P] ARGS` again from anywhere: the ggfuzz
    executable of the library in use (with GGFUZZ_PYTHON for a Python plugin), else
    `python -m ggfuzz`."""
    words = ["--plugin", plugin] if plugin else []
    prefix = ""
    try:
        exe = [_locate.home("exe")]
        if plugin and plugin.endswith(".py"):
            prefix = "GGFUZZ_PYTHON=%s " % shlex.quote(sys.executable)
    except OSError:
        exe = [sys.executable, "-m", "ggfuzz"]
    return prefix + " ".join(shlex.quote(w) for w in exe + words + list(args))


def corpus(*parts):
    """A path in the corpus of the ggfuzz in use: corpus("seeds"), corpus("suite", "quick")."""
    return os.path.join(_locate.home("corpus"), *parts)


def cases_of(seeds=True, tier=None, cases=()):
    """The case files, sorted within each source: the seeds (corpus/seeds), the tier's
    (corpus/suite/TIER), then each of cases (a case file, or a directory walked for *.case)."""
    dirs = ([corpus("seeds")] if seeds else []) + ([corpus("suite", tier)] if tier else [])
    out = []
    for src in dirs + [os.path.abspath(c) for c in cases]:
        if os.path.isdir(src):
            found = sorted(glob.glob(os.path.join(src, "**", "*.case"), recursive=True))
            if not found:
                raise FileNotFoundError("%s: no *.case files" % src)
            out += found
        elif os.path.isfile(src):
            out.append(src)
        else:
            raise FileNotFoundError("%s: no such case file or directory" % src)
    return out


class CaseResult:
    """One case run on one kernel: path, kernel, mutant, plugin, record (the case's object of
    `ggfuzz run --json`), and what the record says: refused, error, verdict, passed."""

    def __init__(self, path, kernel, mutant, plugin, record):
        self.path, self.kernel, self.mutant, self.plugin = path, kernel, mutant, plugin
        self.record = record
        self.error = record.get("error")
        self.refused = bool(record.get("refused"))
        self.verdict = record.get("class")
        self.passed = self.verdict == "pass"

    @property
    def replay(self):
        """The command that runs this case again with every group's worst element."""
        args = ["run", "-v", "--kernel", self.kernel]
        if self.mutant:
            args += ["--mutant", self.mutant]
        return command(self.plugin, args + [self.path])

    def message(self):
        """What failed and where: the verdict, the first failing group and element, the worst
        element of that group, and the command that replays it."""
        who = self.kernel + ("+" + self.mutant if self.mutant else "")
        r = self.record
        if self.error is not None:
            lines = ["%s could not run %s: %s" % (who, self.path, self.error)]
        else:
            lines = ["%s fails %s: %s" % (who, self.path, self.verdict),
                     "  " + r.get("detail", ""), "  signature " + r.get("signature", "")]
            groups = r.get("groups", [])
            bad = [g for g, m in enumerate(groups)
                   if m.get("past_bound", 0) + m.get("nan", 0) + m.get("unwritten", 0) > 0]
            if bad:
                g, m = bad[0], groups[bad[0]]
                first = m.get("first_bad", {})
                lines.append("  first failing element: group %d, row %s, column %s of its block "
                             "(group %d: %d past bound, %d NaN/Inf mismatches, %d unwritten of %d"
                             " outputs; %d failing groups)"
                             % (g, first.get("row", "?"), first.get("col", "?"), g,
                                m.get("past_bound", 0), m.get("nan", 0), m.get("unwritten", 0),
                                m.get("outputs", 0), len(bad)))
                w = m.get("worst")
                if w:
                    lines.append("  worst element of group %d: row %d, column %d: output %s, "
                                 "reference %s, bound %s (sum|ab| %s)"
                                 % (g, w["row"], w["col"], w["output"], w["reference"],
                                    w["bound"], w["abs"]))
        lines.append("  replay: " + self.replay)
        return "\n".join(lines)

    def check(self):
        """Raises AssertionError with message() unless the case passed."""
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        if not self.passed:
            raise AssertionError(self.message())

    def __repr__(self):
        what = "refused" if self.refused else self.verdict or "error"
        return "<ggfuzz case %s on %s: %s>" % (self.path, self.kernel, what)


def run_cases(kernel, cases, plugin=None, mutant=None, timeout=None):
    """Runs kernel over the case files in one `ggfuzz run` (each case in a child process of its
    own): {path: CaseResult} for every path. HarnessError when ggfuzz could not run them."""
    name, plugin = _kernel_and_plugin(kernel, plugin)
    cases = [os.path.abspath(c) for c in cases]
    fd, json_path = tempfile.mkstemp(prefix="ggfuzz-cases-", suffix=".json")
    os.close(fd)
    try:
        args = ["run", "--kernel", name, "--json", json_path]
        if mutant:
            args += ["--mutant", mutant]
        if timeout:
            args += ["--timeout", str(timeout)]
        rc, out = _ggfuzz(plugin, args + cases)
        try:
            with open(json_path) as f:
                records = json.load(f)["cases"]
        except (OSError, ValueError, KeyError):
            records = None
        if records is None or len(records) != len(cases):
            raise HarnessError("ggfuzz run of %s exited with %d and no result:\n%s"
                               % (name, rc, _tail(out)))
    finally:
        os.unlink(json_path)
    return {c: CaseResult(c, name, mutant, plugin, r) for c, r in zip(cases, records)}


def _meta(path):
    """The @ lines of a case file as {key: text}."""
    meta = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("@"):
                key, _, text = line[1:].rstrip("\n").partition(" ")
                meta[key] = text
    return meta


def _field(text, key):
    m = re.search(r"(?:^| )%s=(\S+)" % re.escape(key), text)
    return m.group(1) if m else None


def _stats(path):
    stats = {}
    try:
        with open(path) as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    stats[key.strip()] = value.strip()
    except OSError:
        pass
    return stats


def fuzz(kernel, seconds=30, mutant=None, plugin=None, runs=None, seed=None, workers=1,
         faults=None, timeout=None, out=None, args=()):
    """Runs a campaign of `seconds` (and at most `runs` cases; with workers=1 and a seed the
    same cases on every machine) against kernel, optionally with a mutant (a planted bug the
    campaign must find), in out (default: a fresh temporary directory, kept only when the
    campaign finds something: corpus/, artifacts/, fuzzer_stats). Returns fuzzer_stats as a dict
    when it finds nothing; raises FuzzFailure listing the buckets (one per bug, each with its
    replay command) and the signatures found, or HarnessError when ggfuzz could not run the
    campaign. args: more `ggfuzz fuzz` flags."""
    __tracebackhide__ = True
    name, plugin = _kernel_and_plugin(kernel, plugin)
    own = out is None
    out = os.path.abspath(out or tempfile.mkdtemp(prefix="ggfuzz-fuzz-"))
    artifacts = os.path.join(out, "artifacts")
    cmd = ["fuzz", os.path.join(out, "corpus"), "--kernel", name, "--max-total-time",
           str(seconds), "--workers", str(workers), "--artifacts", artifacts]
    for flag, value in (("--mutant", mutant), ("--runs", runs), ("--seed", seed),
                        ("--faults", faults), ("--timeout", timeout)):
        if value is not None:
            cmd += [flag, str(value)]
    rc, output = _ggfuzz(plugin, cmd + list(args))
    stats = _stats(os.path.join(out, "fuzzer_stats"))
    who = name + ("+" + mutant if mutant else "")
    if rc == 0 or rc not in _FINDING_CODES:
        if own:
            shutil.rmtree(out, ignore_errors=True)
        if rc == 0:
            return stats
        raise HarnessError("ggfuzz fuzz of %s exited with %d, not a finding:\n%s"
                           % (who, rc, _tail(output)))
    buckets, signatures = [], []
    for path in sorted(glob.glob(os.path.join(artifacts, "buckets", "*.case"))):
        b = _meta(path).get("bucket", "")
        buckets.append({"id": _field(b, "id"), "form": _field(b, "form"), "path": path,
                        "replay": command(plugin, ["--replay", path])})
    for path in sorted(glob.glob(os.path.join(artifacts, "*.case"))):
        meta = _meta(path)
        signatures.append({"signature": _field(meta.get("expect", ""), "sig"), "path": path,
                           "bucket": _field(meta.get("bucket", ""), "id")})
    lines = ["ggfuzz.fuzz: %s: %d bug%s (buckets), %d signature%s in %s cases; findings in %s"
             % (who, len(buckets), "" if len(buckets) == 1 else "s", len(signatures),
                "" if len(signatures) == 1 else "s", stats.get("execs_done", "?"), artifacts)]
    for b in buckets:
        members = sum(1 for s in signatures if s["bucket"] == b["id"])
        lines += ["  bucket %s %s (%d signatures)" % (b["id"], b["form"], members),
                  "    replay: " + b["replay"]]
    untriaged = [s for s in signatures if not s["bucket"]]
    for s in untriaged[:8]:
        lines += ["  signature %s (not in a bucket yet)" % s["signature"],
                  "    replay: " + command(plugin, ["--replay", s["path"]])]
    if len(untriaged) > 8:
        lines.append("  ... and %d more signatures not in a bucket" % (len(untriaged) - 8))
    raise FuzzFailure("\n".join(lines), buckets, signatures, artifacts, stats, output)
