"""BF16 for NumPy, which has no bf16 type: host operands of bf16 are uint16 arrays of the raw
bits. bf16_to_f32 decodes them exactly; f32_to_bf16 rounds float32 to the nearest bf16, ties to
even, NaN kept a (quiet) NaN of the same sign, as a GPU's conversion does."""

import numpy as np


def bf16_to_f32(bits):
    """float32 array of the bf16 values whose bits (uint16) are given: exact."""
    bits = np.asarray(bits, dtype=np.uint16)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x, out=None):
    """uint16 array of the bf16 bits nearest to x (float32), ties to even. With out (a uint16
    array of x's shape, such as a kernel's output view) the bits are written there."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (u >> np.uint32(16)) & np.uint32(1)
    r = ((u + np.uint32(0x7FFF) + lsb) >> np.uint32(16)).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        r[nan] = ((u[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    if out is None:
        return r
    out[...] = r
    return out
