"""ggfuzz's pytest plugin: one test per case file for a kernel under test. pytest loads it by
itself where the package is installed (pip: the pytest11 entry point), else with
`-p ggfuzz.pytest_plugin` (the package on PYTHONPATH).

    import pytest
    import my_kernels            # the plugin file: importing it registers its kernels

    @pytest.mark.ggfuzz(my_kernels.KERNEL, seeds=True, tier="quick")
    def test_case(ggfuzz_case):  # one test per case: seeds/NAME, quick/NAME
        ggfuzz_case.check()      # fails naming the first failing group and element, and the replay

The marker ggfuzz(kernel, plugin=None, mutant=None, seeds=True, tier=None, cases=(),
timeout=None) says what a test that takes the fixture ggfuzz_case runs: kernel (a ggfuzz.Kernel,
or a name, with plugin=FILE where it is not registered in this process) on the seeds of the
ggfuzz in use, the cases of a tier of its suite and any case files or directories of cases. The
fixture is the case's result (ggfuzz.testing.CaseResult); a case the kernel refuses (an op,
dtype or size it does not support, or too large for memory) is skipped with the reason. The
cases of every collected test of one kernel, plugin, mutant and timeout run in one `ggfuzz run`,
each in a child process, when the first of them is set up. ggfuzz.fuzz(kernel, seconds=...,
mutant=...) is the campaign a test runs itself."""

import os

import pytest

from . import testing

_RESULTS = pytest.StashKey() if hasattr(pytest, "StashKey") else None


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "ggfuzz(kernel, plugin=None, mutant=None, seeds=True, tier=None, cases=(), "
        "timeout=None): run the test once per ggfuzz case file, with the case's result as the "
        "ggfuzz_case fixture (ggfuzz.pytest_plugin)")


def _spec(marker):
    """(kernel name, plugin, mutant, timeout) and the case files of a ggfuzz marker."""
    args, kw = list(marker.args), dict(marker.kwargs)
    if len(args) != 1 and "kernel" not in kw:
        raise TypeError("@pytest.mark.ggfuzz takes the kernel (a ggfuzz.Kernel or its name)")
    kernel = args[0] if args else kw.pop("kernel")
    unknown = set(kw) - {"plugin", "mutant", "seeds", "tier", "cases", "timeout"}
    if unknown:
        raise TypeError("@pytest.mark.ggfuzz: unknown argument %s" % ", ".join(sorted(unknown)))
    name, plugin = testing._kernel_and_plugin(kernel, kw.get("plugin"))
    cases = kw.get("cases", ())
    cases = testing.cases_of(kw.get("seeds", True), kw.get("tier"),
                             (cases,) if isinstance(cases, str) else cases)
    return (name, plugin, kw.get("mutant"), kw.get("timeout")), cases


def _case_id(path, seeds, tier):
    """seeds/NAME or TIER/NAME for the corpus's cases, else the file's name (both without
    .case)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    parent = os.path.dirname(path)
    if parent == seeds:
        return "seeds/" + stem
    if tier and parent == tier:
        return os.path.basename(tier) + "/" + stem
    return stem


def pytest_generate_tests(metafunc):
    if "ggfuzz_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("ggfuzz")
    if marker is None:
        raise TypeError("%s takes ggfuzz_case but has no @pytest.mark.ggfuzz(kernel, ...)"
                        % metafunc.definition.name)
    spec, cases = _spec(marker)
    tier = marker.kwargs.get("tier")
    seeds, tier_dir = testing.corpus("seeds"), testing.corpus("suite", tier) if tier else None
    metafunc.parametrize("ggfuzz_case", [(spec, c) for c in cases], indirect=True,
                         ids=[_case_id(c, seeds, tier_dir) for c in cases])


def _results(session):
    """{spec: {path: CaseResult}} of this session, the cases run so far."""
    if _RESULTS is not None:
        return session.stash.setdefault(_RESULTS, {})
    if not hasattr(session, "_ggfuzz_results"):
        session._ggfuzz_results = {}
    return session._ggfuzz_results


@pytest.fixture
def ggfuzz_case(request):
    """The result of the case this test was parametrised with (@pytest.mark.ggfuzz)."""
    spec, path = request.param
    done = _results(request.session).setdefault(spec, {})
    if path not in done:
        # Every case of this spec among the tests selected, not yet run, in one ggfuzz run.
        todo = []
        for item in request.session.items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            s, p = params.get("ggfuzz_case", (None, None))
            if s == spec and p not in done and p not in todo:
                todo.append(p)
        if path not in todo:
            todo.append(path)
        name, plugin, mutant, timeout = spec
        done.update(testing.run_cases(name, todo, plugin=plugin, mutant=mutant,
                                      timeout=timeout))
    result = done[path]
    if result.refused:
        pytest.skip("refused: %s" % result.error)
    return result
