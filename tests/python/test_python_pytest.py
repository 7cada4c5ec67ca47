"""ggfuzz's pytest plugin and ggfuzz.fuzz (CTest test_python_pytest): a test file with the
ggfuzz marker becomes one test per case, a refused case is skipped with the reason, a failing one
fails naming the first failing group and element and a replay command that, pasted into a shell
elsewhere, runs the case again; a marker without a kernel and a fixture without a marker are
collection errors. ggfuzz.fuzz returns fuzzer_stats for a campaign that found nothing, raises
FuzzFailure with the buckets and their replay commands under a mutant (of a Python kernel given
as a ggfuzz.Kernel, of an in-tree C kernel by name) and HarnessError when ggfuzz cannot run it
(a Kernel no plugin file registered is refused before).
Needs GGFUZZ_LIB, GG_SOURCE_DIR and the ggfuzz package on PYTHONPATH, which CTest sets."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import ggfuzz
import ggfuzz.testing

SRC = os.environ["GG_SOURCE_DIR"]
EXAMPLES = os.path.join(SRC, "kernels", "python", "examples")
SEEDS = os.path.join(SRC, "corpus", "seeds")
sys.path.insert(0, EXAMPLES)
import numpy_grouped  # noqa: E402  (registers grouped_bf16_numpy_ref)


class Plugin(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ggfuzz-test-pytest-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def pytest(self, source):
        """Runs pytest with the plugin on a test file of source: (exit code, output)."""
        path = os.path.join(self.dir, "test_generated.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(source))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.dirname(os.path.dirname(ggfuzz.__file__)), EXAMPLES]))
        p = subprocess.run([sys.executable, "-m", "pytest", "-p", "ggfuzz.pytest_plugin", "-p",
                            "no:cacheprovider", "-rs", "-v", path], env=env, cwd=self.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        return p.returncode, p.stdout

    def test_one_test_per_case_and_a_failure_names_where_and_how_to_replay(self):
        rc, out = self.pytest('''
            import pytest, numpy_grouped

            @pytest.mark.ggfuzz(numpy_grouped.KERNEL, mutant="empty_group_garbage", seeds=False,
                                cases=[%r, %r, %r])
            def test_case(ggfuzz_case):
                ggfuzz_case.check()
            ''' % tuple(os.path.join(SEEDS, c) for c in
                        ("wgrad_all_empty.case", "fwd_basic.case", "batched_a8w8.case")))
        self.assertEqual(rc, 1, out)
        self.assertIn("1 failed, 1 passed, 1 skipped", out)
        self.assertIn("test_case[seeds/fwd_basic] PASSED", out)
        self.assertIn("refused: kernel grouped_bf16_numpy_ref does not implement op batched", out)
        self.assertIn("fails %s: snr" % os.path.join(SEEDS, "wgrad_all_empty.case"), out)
        self.assertIn("first failing element: group 0, row 0, column 0 of its block", out)
        self.assertRegex(out, r"worst element of group 0: row \d+, column \d+: output 1\.0, "
                              r"reference 0\.0")
        replay = re.search(r"replay: (.*)", out).group(1)
        self.assertIn("run -v --kernel grouped_bf16_numpy_ref --mutant empty_group_garbage",
                      replay)
        p = subprocess.run(replay, shell=True, cwd="/", stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(p.returncode, 19, replay + "\n" + p.stdout)
        self.assertIn("worst element", p.stdout)

    def test_usage_errors_are_collection_errors(self):
        rc, out = self.pytest('''
            import pytest

            @pytest.mark.ggfuzz(seeds=True)
            def test_no_kernel(ggfuzz_case):
                pass

            def test_no_marker(ggfuzz_case):
                pass
            ''')
        self.assertEqual(rc, 2, out)
        self.assertIn("@pytest.mark.ggfuzz takes the kernel", out)


class Fuzz(unittest.TestCase):
    def test_a_clean_campaign_returns_its_statistics(self):
        stats = ggfuzz.fuzz(numpy_grouped.KERNEL, seconds=30, runs=40, seed=1)
        self.assertEqual(stats["execs_done"], "40")

    def test_the_planted_bug_of_a_python_kernel_is_a_bucket(self):
        with self.assertRaises(ggfuzz.FuzzFailure) as e:
            ggfuzz.fuzz(numpy_grouped.KERNEL, seconds=60, runs=200, seed=1,
                        mutant="empty_group_garbage")
        f = e.exception
        self.assertEqual(len(f.buckets), 1, str(f))
        self.assertIn("grouped_wgrad", f.buckets[0]["form"])
        self.assertIn("g:empty", str(f))
        self.assertTrue(all(s["bucket"] == f.buckets[0]["id"] for s in f.signatures), str(f))
        p = subprocess.run(f.buckets[0]["replay"], shell=True, cwd="/", stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("1 reproduced", p.stdout)
        shutil.rmtree(os.path.dirname(f.artifacts))

    def test_an_in_tree_kernel_by_name(self):
        out = tempfile.mkdtemp(prefix="ggfuzz-test-pytest-")
        with self.assertRaisesRegex(ggfuzz.FuzzFailure, r"1 bug \(buckets\)"):
            ggfuzz.fuzz("grouped_bf16_cpu_serial", seconds=60, runs=100, seed=3,
                        mutant="zero_len_ptr_skip", out=out)
        self.assertTrue(os.path.isdir(os.path.join(out, "artifacts", "buckets")))
        shutil.rmtree(out)

    def test_what_ggfuzz_cannot_run_is_a_harness_error(self):
        with self.assertRaisesRegex(ggfuzz.HarnessError, "no_such_kernel"):
            ggfuzz.fuzz("no_such_kernel", seconds=1)
        unregistered = ggfuzz.Kernel(name="grouped_bf16_nowhere", ops=["grouped_fwd"],
                                     run=lambda p, o: None)
        with self.assertRaisesRegex(ValueError, "give plugin=FILE"):
            ggfuzz.fuzz(unregistered, seconds=1)


if __name__ == "__main__":
    unittest.main()
