"""What a Python kernel sees of a problem and its operands, without copies.

ProblemView reads a struct gg_problem: the op and dtypes by name, the sizes, strides and group
arrays (NumPy views of the harness's int64 arrays, read-only), the options and the mutants.
OperandsView gives each operand of a struct gg_operands in the shape and strides that
kernels/gg_kernel.h defines for the op: host memory as NumPy arrays (inputs read-only; bf16 as
uint16 and the 8-bit formats as uint8 of the raw bits, E2M1 as uint8 of the packed pairs along
the last dimension), device memory (backend cuda or hip) as torch tensors through
__cuda_array_interface__ (bf16 and fp8 viewed as torch.bfloat16 and the float8 types where torch
has them). The views are valid only during the call that received them."""

import ctypes as C

import numpy as np

from . import _abi

# NumPy type strings of the stored elements (the raw bits of the formats NumPy lacks).
_TYPESTR = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "bf16": "<u2", "e4m3": "|u1",
            "e5m2": "|u1", "e4m3fnuz": "|u1", "e5m2fnuz": "|u1", "e2m1": "|u1", "e8m0": "|u1"}
# The torch dtype a device view of raw bits is viewed as, where torch has one.
_TORCH_DTYPE = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
                "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz"}


def _cdiv(a, b):
    return -(-a // b)


def _addr(ptr):
    """The address a ctypes pointer holds, or None for NULL."""
    return C.cast(ptr, C.c_void_p).value


def _ints(addr, typestr, n, device):
    """n integers at addr (None: NULL) as a read-only NumPy array or a device tensor."""
    if not addr:
        return None
    if device:
        return _device_tensor(addr, None, typestr, (n,), (1,))
    return _host_array(addr, typestr, (n,), (1,), True)


class _Interface:
    """An object exposing memory through the array interface of NumPy or CUDA."""

    def __init__(self, key, desc):
        setattr(self, key, desc)


def _host_array(ptr, typestr, shape, strides, readonly):
    """A NumPy array viewing ptr; strides in elements. An empty operand has the strides the
    problem gives it too (a kernel that checks strides sees the problem's, as a C kernel does)."""
    item = np.dtype(typestr).itemsize
    if 0 in shape:
        a = np.ndarray(tuple(int(s) for s in shape), dtype=np.dtype(typestr),
                       buffer=bytearray(0), strides=tuple(int(s) * item for s in strides))
        a.flags.writeable = not readonly
        return a
    if ptr is None:
        return np.empty(shape, dtype=np.dtype(typestr))
    desc = {"version": 3, "typestr": typestr, "shape": tuple(int(s) for s in shape),
            "strides": tuple(int(s) * item for s in strides), "data": (ptr, readonly)}
    return np.asarray(_Interface("__array_interface__", desc))


def _device_tensor(ptr, dtype_name, typestr, shape, strides):
    """A torch tensor viewing device memory at ptr; strides in elements. An empty operand has the
    problem's strides too, not those torch gives a new empty tensor (torch checks strides of
    empty operands: torch._grouped_mm refuses the (1, 1) of an [M, 0] tensor as unaligned)."""
    import torch
    if typestr == "<u2":
        typestr = "<i2"  # torch reads int16 everywhere; bf16 is viewed from it below
    item = np.dtype(typestr).itemsize
    if 0 in shape:
        t = torch.empty_strided(tuple(int(s) for s in shape), tuple(int(s) for s in strides),
                                dtype=_torch_int(typestr), device="cuda")
    elif ptr is None:
        t = torch.empty(tuple(shape), dtype=_torch_int(typestr), device="cuda")
    else:
        desc = {"version": 3, "typestr": typestr, "shape": tuple(int(s) for s in shape),
                "strides": tuple(int(s) * item for s in strides), "data": (ptr, False),
                "stream": None}
        t = torch.as_tensor(_Interface("__cuda_array_interface__", desc), device="cuda")
    name = _TORCH_DTYPE.get(dtype_name)
    if name is not None and hasattr(torch, name):
        t = t.view(getattr(torch, name))
    return t


def _torch_int(typestr):
    import torch
    return {"<i2": torch.int16, "|u1": torch.uint8, "<i8": torch.int64,
            "<i4": torch.int32}.get(typestr) or getattr(torch, np.dtype(typestr).name)


class ProblemView:
    """A struct gg_problem, read once per call. Fields: op, a_dtype, b_dtype, c_dtype, acc_dtype,
    bias_dtype (names as in case files: "bf16", "f32", "e4m3", "none", ...), scaling, b_layout
    ("nk"/"kn"), groups, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, group_lens and
    group_offs (int64 arrays of groups and groups + 1 entries, None when the op has none), topk,
    block_m, sorted_len, sorted_ids, expert_ids (int32 arrays, moe_sorted only), opts (dict of
    the kernel options), mutant (the list as given, or None) and mutants (a tuple of its items).
    """

    def __init__(self, pp):
        p = pp.contents
        self.raw = p
        self.op = _abi.OPS[p.op]
        self.a_dtype, self.b_dtype = _abi.DTYPES[p.a_dtype], _abi.DTYPES[p.b_dtype]
        self.c_dtype, self.acc_dtype = _abi.DTYPES[p.c_dtype], _abi.DTYPES[p.acc_dtype]
        self.bias_dtype = _abi.DTYPES[p.bias_dtype]
        self.scaling = _abi.SCALINGS[p.scaling]
        self.b_layout = _abi.LAYOUTS[p.b_layout]
        for f in ("groups", "m", "n", "k", "lda", "ldb", "ldc", "stride_a", "stride_b",
                  "stride_c", "topk", "block_m", "sorted_len"):
            setattr(self, f, getattr(p, f))
        g = self.groups
        nblocks = self.sorted_len // self.block_m if self.block_m > 0 else 0
        self.group_lens = _ints(_addr(p.group_lens), "<i8", g, False)
        self.group_offs = _ints(_addr(p.group_offs), "<i8", g + 1, False)
        self.sorted_ids = _ints(_addr(p.sorted_ids), "<i4", self.sorted_len, False)
        self.expert_ids = _ints(_addr(p.expert_ids), "<i4", nblocks, False)
        self.opts = {}
        for i in range(p.n_opts if p.opts else 0):
            if p.opts[i].key is not None:
                self.opts[p.opts[i].key.decode()] = p.opts[i].value
        self.mutant = p.mutant.decode() if p.mutant is not None else None
        self.mutants = tuple(self.mutant.split(",")) if self.mutant else ()

    def has_mutant(self, name):
        """True when name is one item of the mutant list (gg_mutant_is)."""
        return name in self.mutants

    @property
    def grouped(self):
        return self.op in ("grouped_fwd", "grouped_dgrad", "grouped_wgrad")

    def shapes(self):
        """{operand: (shape, strides)} in elements for a, b and c, per the table of gg_kernel.h."""
        g, m, n, k = self.groups, self.m, self.n, self.k
        op = self.op
        if op == "grouped_fwd":
            return {"a": ((m, k), (self.lda, 1)), "b": ((g, n, k), (self.stride_b, self.ldb, 1)),
                    "c": ((m, n), (self.ldc, 1))}
        if op == "grouped_dgrad":
            return {"a": ((m, n), (self.lda, 1)), "b": ((g, n, k), (self.stride_b, self.ldb, 1)),
                    "c": ((m, k), (self.ldc, 1))}
        if op == "grouped_wgrad":
            return {"a": ((m, n), (self.lda, 1)), "b": ((m, k), (self.ldb, 1)),
                    "c": ((g, n, k), (self.stride_c, self.ldc, 1))}
        if op == "batched":
            b = (g, k, n) if self.b_layout == "kn" else (g, n, k)
            return {"a": ((g, m, k), (self.stride_a, self.lda, 1)),
                    "b": (b, (self.stride_b, self.ldb, 1)),
                    "c": ((g, m, n), (self.stride_c, self.ldc, 1))}
        if op == "dense":
            return {"a": ((m, k), (self.lda, 1)), "b": ((n, k), (self.ldb, 1)),
                    "c": ((m, n), (self.ldc, 1))}
        return {"a": ((m, k), (self.lda, 1)), "b": ((g, n, k), (self.stride_b, self.ldb, 1)),
                "c": ((m * self.topk, n), (self.ldc, 1))}

    def b_mats(self):
        """Matrices of B: groups, except 1 for grouped wgrad and dense."""
        return 1 if self.op in ("grouped_wgrad", "dense") else self.groups

    def a_rows(self):
        """Rows of A across batches."""
        return self.groups * self.m if self.op == "batched" else self.m

    def scale_shapes(self):
        """(a_scale shape, b_scale shape) of the scaling recipe (None: no such scale)."""
        s, op, k, n = self.scaling, self.op, self.k, self.n
        rows, mats = self.a_rows(), self.b_mats()
        if s == "tensor":
            return (1,), (mats,)
        if s == "mx":
            return (rows, k // _abi.MX_BLOCK), (mats, n, k // _abi.MX_BLOCK)
        if s == "mx_b":
            return None, (mats, n, k // _abi.MX_BLOCK)
        if s == "block128":
            return (rows, _cdiv(k, _abi.BLOCK128)), (mats,)
        if s == "rowwise":
            if op == "grouped_wgrad":
                return (self.groups, n), (self.groups, k)
            return (rows,), (mats, k if op == "grouped_dgrad" else n)
        if s == "blockwise":
            red = n if op == "grouped_dgrad" else k
            return ((rows, _cdiv(red, _abi.BLOCK128)),
                    (mats, _cdiv(n, _abi.BLOCK128), _cdiv(k, _abi.BLOCK128)))
        return None, None


def _packed(shape, strides):
    """Shape and strides of the bytes of E2M1 (two codes a byte along the last dimension)."""
    return shape[:-1] + (_cdiv(shape[-1], 2),), tuple(s // 2 for s in strides[:-1]) + (1,)


class OperandsView:
    """The operands of one run: a, b, c, a_scale, b_scale, bias, workspace (uint8), and for
    device kernels group_lens_dev, group_offs_dev, sorted_ids_dev, expert_ids_dev and stream
    (the harness's stream as a torch.cuda.ExternalStream; run() already runs with it current).
    None where the problem has no such operand."""

    def __init__(self, p, po, device):
        o = po.contents
        self.raw = o
        self.device = device
        shapes = p.shapes()
        self.a = self._view(o.a, p.a_dtype, *shapes["a"], True)
        self.b = self._view(o.b, p.b_dtype, *shapes["b"], True)
        self.c = self._view(o.c, p.c_dtype, *shapes["c"], False)
        sa, sb = p.scale_shapes()
        sdt = "e8m0" if p.scaling in ("mx", "mx_b") else "f32"
        self.a_scale = self._view(o.a_scale, sdt, sa, _packed_strides(sa), True) if sa else None
        self.b_scale = self._view(o.b_scale, sdt, sb, _packed_strides(sb), True) if sb else None
        self.bias = None
        if p.bias_dtype != "none":
            self.bias = self._view(o.bias, p.bias_dtype, (p.b_mats(), p.n), (p.n, 1), True)
        self.workspace = None
        if o.workspace_bytes:
            self.workspace = self._view(o.workspace, "e8m0", (o.workspace_bytes,), (1,), False)
        self.group_lens_dev = self.group_offs_dev = None
        self.sorted_ids_dev = self.expert_ids_dev = self.stream = None
        if device:
            nb = p.sorted_len // p.block_m if p.block_m > 0 else 0
            self.group_lens_dev = _ints(o.group_lens_dev, "<i8", p.groups, True)
            self.group_offs_dev = _ints(o.group_offs_dev, "<i8", p.groups + 1, True)
            self.sorted_ids_dev = _ints(o.sorted_ids_dev, "<i4", p.sorted_len, True)
            self.expert_ids_dev = _ints(o.expert_ids_dev, "<i4", nb, True)

    def _view(self, ptr, dtype, shape, strides, readonly):
        if dtype == "e2m1":
            shape, strides = _packed(tuple(shape), tuple(strides))
        if self.device:
            return _device_tensor(ptr, dtype, _TYPESTR[dtype], shape, strides)
        return _host_array(ptr, _TYPESTR[dtype], shape, strides, readonly)


def _packed_strides(shape):
    """Row-major strides of a packed array of shape."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))
