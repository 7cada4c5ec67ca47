"""torch.bmm in bf16 with torch's default allow_bf16_reduced_precision_reduction = True: cuBLAS may
reduce split-K partial sums in bf16, and the error passes the fp32-accumulation bound that ggfuzz
applies (gamma_k(2^-24) sum|ab| plus the bf16 rounding of the output). ggfuzz found it on
batched_bf16_torch_bmm (snr/.../batched/.../scattered/degraded at M 8, N 2, K 128); the adapter
now turns the flag off, as a user who needs fp32 accumulation must. This script prints the worst
error / bound with the flag on and off:

    python3 tests/vendor/repro_torch_bmm_reduced_precision.py
"""
import torch

torch.manual_seed(0)


def bound(out, absab, k):
    u = 2.0**-24
    g = k * u / (1 - k * u)
    return g * absab + 2.0**-8 / (1 - 2.0**-8) * out.abs()


for m, n, k in [(8, 2, 128), (8, 2, 4096), (64, 2, 2048), (4, 8, 8192), (128, 128, 4096)]:
    a = (torch.rand(1, m, k, device="cuda") * 2 - 1).bfloat16()
    b = torch.randn(1, k, n, device="cuda").bfloat16()
    ref = a.double() @ b.double()
    ab = a.double().abs() @ b.double().abs()
    r = []
    for flag in (True, False):
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = flag
        out = torch.bmm(a, b).double()
        r.append(((out - ref).abs() / bound(out, ab, k)).max().item())
    print(m, n, k, "reduced-precision on: max err/bound %.3g   off: %.3g" % tuple(r))
