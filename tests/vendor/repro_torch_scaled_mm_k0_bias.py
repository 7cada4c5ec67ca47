"""torch._scaled_mm with a reduction length K = 0 and a bias returns zeros: the bias is dropped.

C = A . B^T + bias with K = 0 is the bias in every row (the empty sum is 0). ggfuzz found this on
dense_fp8_torch_scaled_mm_tensorwise and _rowwise (signatures snr/.../k:zero/g:all/all/garbage)
and this script reproduces it without ggfuzz, for tensorwise and rowwise scales:

    python3 tests/vendor/repro_torch_scaled_mm_k0_bias.py

It prints the first outputs, the bias, and "BUG" when the output is not the bias.
"""
import torch

M, N = 4, 32
torch.manual_seed(0)
a = torch.empty((M, 0), device="cuda", dtype=torch.float8_e4m3fn)
b = torch.empty((N, 0), device="cuda", dtype=torch.float8_e4m3fn)
bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
scales = {
    "tensorwise": (torch.ones((), device="cuda"), torch.ones((), device="cuda")),
    "rowwise": (torch.ones((M, 1), device="cuda"), torch.ones((1, N), device="cuda")),
}
bugs = 0
for name, (sa, sb) in scales.items():
    try:
        out = torch._scaled_mm(a, b.t(), sa, sb, bias=bias, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
    except RuntimeError as e:
        print("%-10s refused: %s" % (name, str(e).splitlines()[0]))
        continue
    ok = torch.equal(out, bias.expand(M, N))
    bugs += not ok
    print("%-10s out[0,:4] = %s, bias[:4] = %s: %s" % (name, out[0, :4].tolist(),
                                                       bias[:4].tolist(), "ok" if ok else "BUG"))
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
raise SystemExit(1 if bugs else 0)
