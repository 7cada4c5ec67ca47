"""ggfuzz.cases, the replay of a case at the desk (CTest test_python_cases): a dump's arrays and
a case file's (made through libggfuzz.so) load as NumPy arrays, and as torch tensors where torch
is installed (on its GPU when it sees one); check()
passes the output of a correct NumPy kernel and of the reference kernel of a dump, and fails a
mutant's, naming the first failing group and element as the oracles do; bf16 raw bits and the
8-bit formats decode to the right values; without GGFUZZ_LIB the package finds the library of
the ggfuzz on PATH, which knows its corpus. Needs GGFUZZ_TEST_BIN (the ggfuzz executable),
GGFUZZ_LIB (libggfuzz.so) and GG_SOURCE_DIR, which CTest sets."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import ggfuzz
import ggfuzz.cases as cases

SRC = os.environ["GG_SOURCE_DIR"]
SEEDS = os.path.join(SRC, "corpus", "seeds")
MUTANTS = os.path.join(SRC, "corpus", "mutants")


def ggfuzz_run(*args):
    """ggfuzz run ARGS: (exit code, output)."""
    p = subprocess.run([os.environ["GGFUZZ_TEST_BIN"], "run"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


def grouped(t, skip_empty_pointer=False):
    """A grouped GEMM in NumPy, fp32 accumulation, on t's inputs: fwd Y_g = X_g W_g^T, wgrad
    dW_g = dY_g^T X_g. skip_empty_pointer re-creates zero_len_ptr_skip: the weight pointer
    advances only past groups with tokens."""
    x, w = t.decoded("a").astype(np.float32), t.decoded("b").astype(np.float32)
    out = np.zeros(t.ref.shape, dtype=np.float32)
    wi = 0
    for g in range(t.groups):
        lo, hi = int(t.group_offs[g]), int(t.group_offs[g + 1])
        if t.op == "grouped_wgrad":
            out[g] = x[lo:hi].T @ w[lo:hi]
            continue
        if hi > lo:
            out[lo:hi] = x[lo:hi] @ w[wi if skip_empty_pointer else g].T
            wi += 1
    return out


class Dumps(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ggfuzz-test-cases-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_check_passes_the_reference_kernel_and_fails_the_mutant(self):
        rc, out = ggfuzz_run("--dump", self.dir, os.path.join(MUTANTS, "zero_len_ptr_skip.case"))
        self.assertEqual(rc, 19, out)
        t = cases.load_dump(self.dir)
        self.assertEqual((t.op, t.groups, t.a.dtype, t.a.shape, t.c.shape),
                         ("grouped_fwd", 5, np.uint16, (178, 160), (178, 96)))
        self.assertEqual(t.verdict["failing_groups"], [2, 3, 4])
        with self.assertRaisesRegex(AssertionError, r"group 2, row 0, column 0 .*\(40, 0\)"):
            cases.check(t, t.c)  # the mutant's own output, bf16 bits
        cases.check(t, grouped(t))  # a correct kernel on the same inputs
        cases.check(t, ggfuzz.f32_to_bf16(grouped(t)))  # rounded to bf16, as raw bits
        with self.assertRaisesRegex(AssertionError, r"group 2, row 0, column 0"):
            cases.check(t, grouped(t, skip_empty_pointer=True))
        # Python and the oracles agree on every failing element, group by group.
        bad = cases.failing(t, t.c)
        offs = t.group_offs
        per_group = [int(bad[offs[g]:offs[g + 1]].sum()) for g in range(t.groups)]
        want = [m["past_bound"] + m["nan"] + m["unwritten"] for m in t.group_metrics]
        self.assertEqual(per_group, want)

    def test_the_reference_kernels_output_passes(self):
        rc, out = ggfuzz_run("--mutant", "none", "--dump", self.dir,
                             os.path.join(MUTANTS, "wgrad_zero_uninit.case"),
                             os.path.join(MUTANTS, "sorted_ids_padding.case"))
        self.assertEqual(rc, 0, out)
        for name in ("wgrad_zero_uninit", "sorted_ids_padding"):
            t = cases.load_dump(os.path.join(self.dir, name))
            self.assertEqual(t.verdict["class"], "pass")
            cases.check(t, t.c)
        # moe: an element off in an expert's block names that expert and its row there
        bad = np.array(cases.decode(t.c, "bf16"))
        v = int(t.sorted_ids[0])  # the first row of expert 0, block row 0
        bad[v, 5] += 1.0
        with self.assertRaisesRegex(AssertionError, r"group 0, row 0, column 5 .*\(%d, 5\)" % v):
            cases.check(t, bad)

    def test_a_crash_leaves_inputs_and_reference(self):
        rc, out = ggfuzz_run("--dump", self.dir, os.path.join(MUTANTS, "read_past_end.case"))
        self.assertEqual(rc, 11, out)
        t = cases.load_dump(self.dir)
        self.assertIsNone(t.c)
        self.assertIn("signal 11", t.index["arrays"]["c"]["missing"])
        cases.check(t, grouped(t))

    def test_a_directory_of_dumps_is_named(self):
        rc, out = ggfuzz_run("--no-kernel", "--dump", self.dir, SEEDS + "/fwd_basic.case",
                             SEEDS + "/wgrad_basic.case")
        self.assertEqual(rc, 0, out)
        with self.assertRaisesRegex(FileNotFoundError, "fwd_basic, wgrad_basic"):
            cases.load_dump(self.dir)
        t = cases.load_dump(os.path.join(self.dir, "wgrad_basic"))
        self.assertEqual(t.ref.shape, (t.groups, t.n, t.k))
        cases.check(t, grouped(t))


class CaseFiles(unittest.TestCase):
    def test_load_makes_inputs_and_reference(self):
        t = cases.load(os.path.join(SEEDS, "wgrad_empty_first_splitk.case"))
        self.assertIsNone(t.c)
        self.assertEqual(t.index["state"], "inputs")
        self.assertEqual(list(t.offs), list(t.group_offs[1:]))
        self.assertEqual(t.offs.dtype, np.int32)
        out = grouped(t)
        cases.check(t, out)
        empty = [g for g in range(t.groups) if t.group_lens[g] == 0][0]
        out[empty] = 1.0  # the empty_group_garbage bug: an empty expert's dW not zeroed
        with self.assertRaisesRegex(AssertionError, r"group %d, row 0, column 0" % empty):
            cases.check(t, out)

    def test_a_bad_case_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "exit code 3"):
            cases.load(os.path.join(SRC, "tests", "data", "malformed", "missing_n.case"))


try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "torch is not installed")
class TorchTensors(unittest.TestCase):
    """load(path, device=...) as a kernel team's test uses it: torch tensors on the device (CUDA
    when torch sees one, else the CPU), fed to torch.mm and checked."""

    def test_three_line_test_in_torch(self):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        t = cases.load(os.path.join(SEEDS, "wgrad_empty_first_splitk.case"), device=device)
        self.assertEqual((t.a.dtype, t.a.device.type), (torch.bfloat16, device))
        self.assertEqual(t.offs.dtype, torch.int32)
        self.assertEqual(t.offs.tolist(), t.group_offs[1:].tolist())
        x, w = t.a.float(), t.b.float()
        out = torch.zeros(tuple(t.ref.shape), dtype=torch.float32, device=device)
        offs = [0] + t.offs.tolist()
        for g in range(t.groups):
            out[g] = x[offs[g]:offs[g + 1]].t() @ w[offs[g]:offs[g + 1]]
        cases.check(t, out.to(torch.bfloat16) if t.c_dtype == "bf16" else out)
        empty = [g for g in range(t.groups) if int(t.group_lens[g]) == 0][0]
        out[empty] = 1.0
        with self.assertRaisesRegex(AssertionError, r"group %d, row 0, column 0" % empty):
            cases.check(t, out)


class Decoding(unittest.TestCase):
    def test_bf16_bits(self):
        bits = np.array([0x3F80, 0xC040, 0x0001, 0x7F80, 0xFF80, 0x4049, 0x8000], dtype=np.uint16)
        v = cases.decode(bits, "bf16")
        self.assertEqual(list(v[:5]), [1.0, -3.0, 2.0 ** -133, np.inf, -np.inf])
        self.assertEqual(v[5], 3.140625)
        self.assertTrue(np.signbit(v[6]) and v[6] == 0)
        self.assertTrue(np.isnan(cases.decode(np.array([0x7FC0], np.uint16), "bf16")[0]))
        np.testing.assert_array_equal(ggfuzz.bf16_to_f32(bits), v.astype(np.float32))

    def test_bf16_inputs_give_the_reference(self):
        # small integers: every product and sum exact, so the reference is the decoded product
        t = cases.load(os.path.join(SEEDS, "fwd_ints_exact.case"))
        x, w = t.decoded("a"), t.decoded("b")
        self.assertTrue(np.array_equal(x, np.round(x)) and np.abs(x).max() <= 4)
        for g in range(t.groups):
            lo, hi = int(t.group_offs[g]), int(t.group_offs[g + 1])
            np.testing.assert_array_equal(t.ref[lo:hi], x[lo:hi] @ w[g].T)

    def test_eight_bit_formats(self):
        codes = np.array([0x38, 0x7E, 0x7F, 0x01, 0xB8], dtype=np.uint8)
        e4m3 = cases.decode(codes, "e4m3")
        self.assertEqual(list(e4m3[[0, 1, 3, 4]]), [1.0, 448.0, 2.0 ** -9, -1.0])
        self.assertTrue(np.isnan(e4m3[2]))
        e5m2 = cases.decode(np.array([0x3C, 0x7B, 0x7C, 0xFC, 0x7D], np.uint8), "e5m2")
        self.assertEqual(list(e5m2[:4]), [1.0, 57344.0, np.inf, -np.inf])
        self.assertTrue(np.isnan(e5m2[4]))
        fnuz = cases.decode(np.array([0x38, 0x7F, 0x80], np.uint8), "e4m3fnuz")
        self.assertEqual(list(fnuz[:2]), [0.5, 240.0])  # half the OCP value, max 240
        self.assertTrue(np.isnan(fnuz[2]))
        e8m0 = cases.decode(np.array([127, 0, 254, 255], np.uint8), "e8m0")
        self.assertEqual(list(e8m0[:3]), [1.0, 2.0 ** -127, 2.0 ** 127])
        self.assertTrue(np.isnan(e8m0[3]))
        self.assertEqual(list(cases.decode(np.array([[0x71, 0xF2]], np.uint8), "e2m1")[0]),
                         [0.5, 6.0, 1.0, -6.0])


class Locate(unittest.TestCase):
    """Without GGFUZZ_LIB the package finds the library of the ggfuzz on PATH, and the library
    its own corpus, package and executable: a build tree's are its source tree's."""

    def setUp(self):
        self.env = dict(os.environ, PATH=os.path.dirname(os.environ["GGFUZZ_TEST_BIN"]) + os.pathsep
                        + os.environ.get("PATH", ""))
        del self.env["GGFUZZ_LIB"]

    def python(self, *args):
        p = subprocess.run([sys.executable] + list(args), env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True,
                           cwd=tempfile.gettempdir())
        return p.returncode, p.stdout

    def test_library_and_home(self):
        rc, out = self.python("-c", "import ggfuzz._locate as l; print(l.library()); "
                              "print(*(l.home(w) for w in ('corpus', 'python', 'exe', 'lib')))")
        self.assertEqual(rc, 0, out)
        lib = os.path.realpath(os.environ["GGFUZZ_LIB"])
        self.assertEqual(out.split(), [lib, os.path.realpath(os.path.join(SRC, "corpus")),
                                       os.path.realpath(os.path.join(SRC, "kernels", "python")),
                                       os.path.realpath(os.environ["GGFUZZ_TEST_BIN"]), lib])

    def test_python_m_ggfuzz_and_cases_load(self):
        rc, out = self.python("-m", "ggfuzz", "run", os.path.join(SEEDS, "fwd_basic.case"))
        self.assertEqual(rc, 0, out)
        rc, out = self.python("-c", "import ggfuzz.cases as c; print(c.load(%r))"
                              % os.path.join(SEEDS, "fwd_basic.case"))
        self.assertEqual(rc, 0, out)
        self.assertIn("grouped_fwd", out)

    def test_without_a_library_the_message_says_what_to_set(self):
        self.env["PATH"] = "/nonexistent"
        rc, out = self.python("-m", "ggfuzz", "list")
        self.assertEqual(rc, 3, out)
        self.assertIn("libggfuzz.so not found", out)
        self.assertIn("set GGFUZZ_LIB", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
