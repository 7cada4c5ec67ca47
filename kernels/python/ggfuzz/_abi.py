"""The ctypes mirror of the kernel ABI (kernels/gg_kernel.h, ABI version 3): its enums as names,
the structs gg_kopt, gg_problem, gg_operands, gg_kernel and gg_plugin_host, the callback types,
and the check of this mirror against the layout table the library was compiled with
(gg_cli_abi_layout in fuzz/cli/gg_cli.h)."""

import ctypes as C

ABI_VERSION = 3

# enum gg_status
OK, E_INVAL, E_NOMEM, E_DEVICE, E_UNSUPPORTED, E_IO, E_ABI, E_PARSE, E_INTERNAL = (
    0, -1, -2, -3, -4, -5, -6, -7, -8)

# Names as case files and `ggfuzz list` spell them, indexed by the enum's value.
DTYPES = ("none", "f64", "f32", "f16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m1",
          "e8m0")
OPS = ("grouped_fwd", "grouped_dgrad", "grouped_wgrad", "batched", "dense", "moe_sorted")
SCALINGS = ("none", "tensor", "mx", "block128", "mx_b", "rowwise", "blockwise")
LAYOUTS = ("nk", "kn")
BACKENDS = ("cpu", "cuda", "hip")
MX_BLOCK = 32
BLOCK128 = 128


class Kopt(C.Structure):
    _fields_ = [("key", C.c_char_p), ("value", C.c_int64)]


class Problem(C.Structure):
    _fields_ = [
        ("op", C.c_int), ("a_dtype", C.c_int), ("b_dtype", C.c_int), ("c_dtype", C.c_int),
        ("acc_dtype", C.c_int), ("scaling", C.c_int), ("b_layout", C.c_int),
        ("groups", C.c_int64), ("m", C.c_int64), ("n", C.c_int64), ("k", C.c_int64),
        ("lda", C.c_int64), ("ldb", C.c_int64), ("ldc", C.c_int64),
        ("stride_a", C.c_int64), ("stride_b", C.c_int64), ("stride_c", C.c_int64),
        ("group_lens", C.POINTER(C.c_int64)), ("group_offs", C.POINTER(C.c_int64)),
        ("bias_dtype", C.c_int),
        ("topk", C.c_int64), ("block_m", C.c_int64), ("sorted_len", C.c_int64),
        ("sorted_ids", C.POINTER(C.c_int32)), ("expert_ids", C.POINTER(C.c_int32)),
        ("opts", C.POINTER(Kopt)), ("n_opts", C.c_int),
        ("mutant", C.c_char_p),
    ]


class Operands(C.Structure):
    _fields_ = [
        ("a", C.c_void_p), ("b", C.c_void_p), ("c", C.c_void_p),
        ("a_scale", C.c_void_p), ("b_scale", C.c_void_p), ("bias", C.c_void_p),
        ("workspace", C.c_void_p), ("workspace_bytes", C.c_size_t),
        ("group_lens_dev", C.c_void_p), ("group_offs_dev", C.c_void_p),
        ("sorted_ids_dev", C.c_void_p), ("expert_ids_dev", C.c_void_p),
        ("stream", C.c_void_p),
    ]


# int supports(const struct gg_problem *, char *why, size_t why_len)
SUPPORTS_FN = C.CFUNCTYPE(C.c_int, C.POINTER(Problem), C.c_void_p, C.c_size_t)
# size_t workspace_bytes(const struct gg_problem *)
WORKSPACE_FN = C.CFUNCTYPE(C.c_size_t, C.POINTER(Problem))
# enum gg_status run(const struct gg_problem *, const struct gg_operands *, char *, size_t)
RUN_FN = C.CFUNCTYPE(C.c_int, C.POINTER(Problem), C.POINTER(Operands), C.c_void_p, C.c_size_t)


class Kernel(C.Structure):
    _fields_ = [
        ("abi_version", C.c_uint32), ("name", C.c_char_p), ("summary", C.c_char_p),
        ("backend", C.c_int), ("ops", C.c_uint32),
        ("tile_m", C.c_int64), ("tile_n", C.c_int64), ("tile_k", C.c_int64),
        ("mutants", C.POINTER(C.c_char_p)),
        ("supports", SUPPORTS_FN), ("workspace_bytes", WORKSPACE_FN), ("run", RUN_FN),
    ]


# enum gg_status add_kernel(void *ctx, const struct gg_kernel *, char *err, size_t err_len)
ADD_KERNEL_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Kernel), C.c_char_p, C.c_size_t)


class PluginHost(C.Structure):
    _fields_ = [("abi_version", C.c_uint32), ("ctx", C.c_void_p), ("add_kernel", ADD_KERNEL_FN)]


# enum gg_status loader(const char *path, const struct gg_plugin_host *, char *err, size_t)
LOADER_FN = C.CFUNCTYPE(C.c_int, C.c_char_p, C.POINTER(PluginHost), C.c_void_p, C.c_size_t)


class AbiEntry(C.Structure):
    _fields_ = [("name", C.c_char_p), ("value", C.c_size_t)]


_STRUCTS = {"gg_kopt": Kopt, "gg_problem": Problem, "gg_operands": Operands,
            "gg_kernel": Kernel, "gg_plugin_host": PluginHost}


def layout_differences(table):
    """The differences between this mirror and the library's layout table (a pointer to its
    first AbiEntry), as messages; empty when they agree."""
    diffs, seen = [], set()
    i = 0
    while table[i].name is not None:
        name, value = table[i].name.decode(), table[i].value
        i += 1
        if name == "GG_KERNEL_ABI_VERSION":
            mine = ABI_VERSION
        elif "." in name:
            struct, field = name.split(".", 1)
            cls = _STRUCTS.get(struct)
            desc = getattr(cls, field, None) if cls is not None else None
            mine = desc.offset if desc is not None else None
            seen.add(name)
        else:
            cls = _STRUCTS.get(name)
            mine = C.sizeof(cls) if cls is not None else None
        if mine is None:
            diffs.append("%s: missing from the Python mirror" % name)
        elif mine != value:
            diffs.append("%s: %d in the Python mirror, %d in the library" % (name, mine, value))
    for struct, cls in _STRUCTS.items():
        for field, _ in cls._fields_:
            if "%s.%s" % (struct, field) not in seen:
                diffs.append("%s.%s: not in the library" % (struct, field))
    return diffs
