"""Replay at the desk: a ggfuzz case as NumPy arrays or torch tensors, and the oracles'
per-element check, for a test in your own suite.

    t = ggfuzz.cases.load("finding.case", device="cuda")
    out = my_kernel(t.a, t.b, t.offs)
    ggfuzz.cases.check(t, out)

load(path) makes the case's inputs and reference with libggfuzz.so (GGFUZZ_LIB, else an installed
package's own, else that of the `ggfuzz` on PATH): what `ggfuzz run --dump DIR --no-kernel CASE`
writes, read back.
load_dump(dir) reads a directory that `ggfuzz run --dump DIR` wrote (with the kernel's output
as t.c). Arrays are the harness's as stored: bf16 as uint16 and the 8-bit formats as uint8 of
the raw bits, E2M1 as uint8 bytes of two codes (decode() gives their values); with device they
are torch tensors there, bf16 and fp8 viewed as torch.bfloat16 and torch.float8_* where torch
has them. Host arrays are read-only (memory-mapped)."""

import ctypes
import json
import os
import shutil
import tempfile

import numpy as np

# The torch dtypes raw bits are viewed as (views.py's, and E8M0 where torch has it).
_TORCH_VIEW = {"bf16": ("int16", "bfloat16"), "e4m3": ("uint8", "float8_e4m3fn"),
               "e5m2": ("uint8", "float8_e5m2"), "e4m3fnuz": ("uint8", "float8_e4m3fnuz"),
               "e5m2fnuz": ("uint8", "float8_e5m2fnuz"), "e8m0": ("uint8", "float8_e8m0fnu")}
_ARRAYS = ("a", "b", "a_scale", "b_scale", "bias", "group_lens", "group_offs", "sorted_ids",
           "expert_ids", "ref", "abs", "bound", "c")
_PROBLEM = ("op", "kernel", "mutant", "a_dtype", "b_dtype", "c_dtype", "acc_dtype", "bias_dtype",
            "scaling", "b_layout", "groups", "m", "n", "k", "lda", "ldb", "ldc", "stride_a",
            "stride_b", "stride_c", "topk", "block_m", "seed")


def _number(x):
    """A number of the index: JSON has no NaN or infinities, which it holds as strings."""
    return float(x) if isinstance(x, str) else x


class Case:
    """One case's tensors. Arrays (None where the case has none): a, b, a_scale, b_scale, bias,
    group_lens and group_offs (int64: each group's first row, then the total), offs (the groups'
    end offsets, group_offs[1:], int32: what torch._grouped_mm takes), sorted_ids, expert_ids,
    ref (the exact product in fp64, in the output's shape), abs (Σ|ab| of each output), bound
    and rel (an output passes when |out - ref| <= rel·|out| + bound; NaN bound: not judged), c
    (a dump's kernel output, as stored). Fields of the problem: op, kernel, mutant, the dtypes,
    scaling, b_layout, groups, m, n, k, the leading dimensions and strides the kernel saw, topk,
    block_m, seed. Also dtypes ({array: harness dtype}), index (index.json), verdict,
    failures and group_metrics (a dump's, else None and [])."""

    def __init__(self, index, arrays, device):
        self.index = index
        self.device = device
        p = index["problem"]
        for f in _PROBLEM:
            setattr(self, f, p.get(f))
        self.problem = p
        self.dtypes = {name: a["dtype"] for name, a in index["arrays"].items()}
        self.rel = _number(index["bound"]["rel"])
        self.verdict = index.get("verdict")
        self.failures = index.get("failures", [])
        self.group_metrics = index.get("groups", [])
        self.host = arrays  # the NumPy arrays, whatever the device
        for name in _ARRAYS:
            setattr(self, name, _to_device(arrays.get(name), self.dtypes.get(name), device))
        offs = arrays.get("group_offs")
        self.offs = None
        if offs is not None:
            self.offs = _to_device(np.ascontiguousarray(offs[1:], dtype=np.int32), "i32", device)

    def decoded(self, name):
        """The values of array name as float64 NumPy (codes decoded, scales not applied)."""
        return decode(self.host[name], self.dtypes[name])

    def __repr__(self):
        return "<ggfuzz case %s %s %s-%s-%s groups=%s m=%s n=%s k=%s>" % (
            self.op, self.kernel, self.a_dtype, self.b_dtype, self.c_dtype, self.groups, self.m,
            self.n, self.k)


def _to_device(arr, dtype, device):
    if arr is None or device is None:
        return arr
    import torch
    view = _TORCH_VIEW.get(dtype)
    host = np.array(arr)  # a writable copy of the memory-mapped file
    if view is not None:
        host = host.view(view[0])
    t = torch.from_numpy(host).to(device)
    if view is not None and hasattr(torch, view[1]):
        t = t.view(getattr(torch, view[1]))
    return t


def load_dump(path, device=None):
    """The case dumped in directory path by `ggfuzz run --dump` (its index.json and arrays)."""
    index_path = os.path.join(path, "index.json")
    if not os.path.isfile(index_path):
        subs = sorted(d for d in os.listdir(path)
                      if os.path.isfile(os.path.join(path, d, "index.json"))) \
            if os.path.isdir(path) else []
        raise FileNotFoundError("%s: no index.json%s" % (
            path, "; one dump per case in %s/<case>: %s" % (path, ", ".join(subs[:8]))
            if subs else ""))
    with open(index_path) as f:
        index = json.load(f)
    if index.get("format") != "ggfuzz-dump":
        raise ValueError("%s: not a ggfuzz dump (format %r)" % (index_path, index.get("format")))
    arrays = {}
    for name, a in index["arrays"].items():
        if a.get("file"):
            arrays[name] = np.load(os.path.join(path, a["file"]), mmap_mode="r")
    return Case(index, arrays, device)


def _library(lib):
    from . import _locate
    so = _locate.load(lib)
    so.gg_cli_dump_inputs.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    so.gg_cli_dump_inputs.restype = ctypes.c_int
    return so


def load(path, device=None, lib=None):
    """The inputs and the reference of case file path (no kernel runs), made by libggfuzz.so
    (lib, else GGFUZZ_LIB, else an installed package's own, else that of the ggfuzz on PATH).
    Raises ValueError with ggfuzz's
    message when the case cannot be made (malformed, too large for memory)."""
    so = _library(lib)
    tmp = tempfile.mkdtemp(prefix="ggfuzz-case-")
    try:
        err = ctypes.create_string_buffer(1024)
        rc = so.gg_cli_dump_inputs(os.fsencode(path), os.fsencode(tmp), err, len(err))
        if rc != 0:
            raise ValueError("ggfuzz: %s (exit code %d)" % (err.value.decode("utf-8", "replace"),
                                                            rc))
        return load_dump(tmp, device)  # the mappings outlive the files
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- Decoding ---------------------------------------------------------------------------------

def _minifloat(ebits, mbits, bias, kind):
    """The 2^(1+ebits+mbits) values of a small float format: kind "ieee" (Inf and NaN at the top
    exponent), "fn" (OCP E4M3: NaN only at all ones, no Inf) or "fnuz" (NaN at -0, no Inf)."""
    n = 1 << (1 + ebits + mbits)
    out = np.empty(n, dtype=np.float64)
    top = (1 << ebits) - 1
    for code in range(n):
        s = -1.0 if code >> (ebits + mbits) else 1.0
        e, m = (code >> mbits) & top, code & ((1 << mbits) - 1)
        v = (m / (1 << mbits)) * 2.0 ** (1 - bias) if e == 0 else \
            (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        if kind == "ieee" and e == top:
            v = float("inf") if m == 0 else float("nan")
        elif kind == "fn" and e == top and m == (1 << mbits) - 1:
            v = float("nan")
        elif kind == "fnuz" and code == n >> 1:
            v, s = float("nan"), 1.0
        out[code] = s * v
    return out


_TABLES = {}
_FORMATS = {"e4m3": (4, 3, 7, "fn"), "e5m2": (5, 2, 15, "ieee"), "e4m3fnuz": (4, 3, 8, "fnuz"),
            "e5m2fnuz": (5, 2, 16, "fnuz"), "e2m1": (2, 1, 1, "none")}


def decode(bits, dtype):
    """float64 values of an array stored as the harness stores dtype: bf16 as uint16 bits, the
    8-bit formats as uint8 codes, E8M0 as 2^(x-127) (0xFF NaN), E2M1 as bytes of two codes (the
    last dimension doubles), f16/f32/f64 and integers as they are. Exact."""
    a = np.asarray(bits)
    if dtype == "bf16":
        u = (a.astype(np.int64) & 0xFFFF).astype(np.uint32)  # int16 views of the bits too
        with np.errstate(invalid="ignore"):  # signalling NaNs (the sentinel) stay NaNs
            return (u << np.uint32(16)).view(np.float32).astype(np.float64)
    if dtype == "e8m0" or dtype in _FORMATS:
        a = a.astype(np.int64) & 0xFF
    if dtype == "e8m0":
        return np.where(a == 0xFF, np.nan, np.ldexp(1.0, a - 127))
    if dtype in _FORMATS:
        if dtype not in _TABLES:
            _TABLES[dtype] = _minifloat(*_FORMATS[dtype])
        if dtype == "e2m1":
            codes = np.stack([a & 0xF, a >> 4], axis=-1).reshape(a.shape[:-1] + (-1,))
            return _TABLES[dtype][codes]
        return _TABLES[dtype][a]
    return a.astype(np.float64)


# ---- The check --------------------------------------------------------------------------------

def _host_values(t, out):
    """out as float64 NumPy, with a mask of the elements that hold the harness's unwritten
    sentinel (raw bits only)."""
    if hasattr(out, "detach"):  # a torch tensor
        import torch
        out = out.detach()
        if out.is_floating_point() and out.dtype != torch.float64:
            out = out.to(dtype=torch.float32)  # exact for bf16, fp16 and fp8
        out = out.cpu().numpy()
    out = np.asarray(out)
    cdt = t.dtypes["c"]
    sentinel = t.index["arrays"]["c"].get("sentinel")
    sentinel = int(sentinel, 16) if sentinel and cdt != "e2m1" else None  # e2m1: a value
    unwritten = np.zeros(out.shape, dtype=bool)
    if out.dtype.kind in "ui":
        if sentinel is not None:
            unwritten = out.astype(np.int64) == sentinel
        return decode(out, cdt), unwritten
    if cdt == "f32" and out.dtype == np.float32 and sentinel is not None:
        unwritten = out.view(np.uint32) == np.uint32(sentinel)
    with np.errstate(invalid="ignore"):
        return out.astype(np.float64), unwritten


def _block_coords(t, shape):
    """For each output element (the output's logical shape): its group and its row in the
    group's block, as the oracles number them."""
    p = t.problem
    idx = np.indices(shape)
    if t.op in ("grouped_fwd", "grouped_dgrad"):
        offs = np.asarray(t.host["group_offs"], dtype=np.int64)
        g = np.searchsorted(offs[1:], idx[0], side="right")
        return g, idx[0] - offs[g]
    if t.op in ("grouped_wgrad", "batched"):
        return idx[0], idx[1]
    if t.op == "moe_sorted":
        ids = np.asarray(t.host["sorted_ids"], dtype=np.int64)
        experts = np.asarray(t.host["expert_ids"], dtype=np.int64)
        rows = shape[0]
        expert_of = np.zeros(rows, dtype=np.int64)
        rank = np.zeros(rows, dtype=np.int64)
        seen = {}
        for i, v in enumerate(ids):
            if v < rows:
                e = int(experts[i // p["block_m"]])
                expert_of[v], rank[v] = e, seen.get(e, 0)
                seen[e] = rank[v] + 1
        return expert_of[idx[0]], rank[idx[0]]
    return np.zeros(shape, dtype=np.int64), idx[0]


def failing(t, out):
    """The boolean mask of the outputs the oracles' per-element rules reject: unwritten
    (sentinel bits), a NaN or infinity where the reference has none (but a correctly rounded
    overflow), a wrong special value, |out - ref| > rel·|out| + bound. Elements with a NaN
    bound are not judged."""
    ref = np.asarray(t.host["ref"], dtype=np.float64)
    out, unwritten = _host_values(t, out)
    if out.shape != ref.shape:
        raise AssertionError("ggfuzz check: output shape %s, the case's is %s"
                             % (out.shape, ref.shape))
    bound = np.asarray(t.host["bound"], dtype=np.float64)
    absv = np.asarray(t.host["abs"], dtype=np.float64)
    b = t.index["bound"]
    rel, cmax, accmax = t.rel, _number(b["c_max"]), _number(b["acc_max"])
    with np.errstate(all="ignore"):
        finite_ref, finite_out = np.isfinite(ref), np.isfinite(out)
        judged = ~(np.isnan(bound) & finite_ref)
        # A NaN reference needs a NaN; an infinite one the same infinity, or a NaN when its
        # finite terms can overflow the accumulator.
        nan_ref = np.isnan(ref) & ~np.isnan(out)
        overflow_nan = ~(absv + rel * accmax + bound < accmax)
        inf_ref = np.isinf(ref) & (out != ref) & ~(np.isnan(out) & overflow_nan)
        # A finite reference: a non-finite output only as a correctly rounded overflow.
        overflow_ok = np.isinf(out) & (np.signbit(out) == np.signbit(ref)) & \
            (np.abs(ref) + rel * cmax + bound >= cmax)
        special_out = finite_ref & ~finite_out & ~overflow_ok
        past = finite_ref & finite_out & (np.abs(out - ref) > rel * np.abs(out) + bound)
    bad = judged & (nan_ref | inf_ref | special_out | past)
    return bad | unwritten


def check(t, out):
    """Applies the oracles' per-element check to out (NumPy array or torch tensor in the
    output's shape: values, or the raw bits the harness stores) against t's reference. Raises
    AssertionError naming the first failing element in the oracles' order (group, then row and
    column of its block), with the count of the others; the SNR is not checked."""
    bad = failing(t, out)
    if not bad.any():
        return
    vals, unwritten = _host_values(t, out)
    ref = np.asarray(t.host["ref"])
    bound = np.asarray(t.host["bound"])
    g, r = _block_coords(t, ref.shape)
    where = np.nonzero(bad)
    order = np.lexsort((where[-1], r[where], g[where]))
    first = tuple(int(w[order[0]]) for w in where)
    gi, ri, ci = int(g[first]), int(r[first]), first[-1]
    o, f = vals[first], ref[first]
    if unwritten[first]:
        what = "unwritten (the harness's sentinel)"
    elif not (np.isfinite(o) and np.isfinite(f)):
        what = "output %r where the reference is %r" % (float(o), float(f))
    else:
        what = "output %r, reference %r: |out - ref| = %.6g > bound %.6g" % (
            float(o), float(f), abs(o - f), t.rel * abs(o) + float(bound[first]))
    groups = np.unique(g[where])
    raise AssertionError(
        "ggfuzz check: group %d, row %d, column %d of its block (output index %s): %s; %d "
        "failing elements in %d groups (%s)" % (
            gi, ri, ci, first, what, int(bad.sum()), len(groups),
            ", ".join(str(int(x)) for x in groups[:16]) + (", ..." if len(groups) > 16 else "")))
