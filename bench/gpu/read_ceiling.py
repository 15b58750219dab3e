"""The read ceiling at a given size: how fast PyTorch reads n float32 values once (x.sum(),
x.amax()) against its copy (read + write), each timed by triton.testing.do_bench (median), as
bench.py times the cases. At the size of decode attention's K and V (8192 keys: 256 MB) the
fixed costs of a launch and of the memory system's ramp are a larger part of the time than in
bench.py's copy ceiling (1 GiB read and written), so this is the peer a read-once kernel of
that size is measured against. Run on the GPU: python3 bench/gpu/read_ceiling.py"""
import torch
import triton

for keys in (8192, 32768, 131072):
    n = 2 * 32 * keys * 128          # K and V: 32 heads, D = 128
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    t_sum = triton.testing.do_bench(lambda: x.sum(), warmup=100, rep=500, return_mode="median")
    t_amax = triton.testing.do_bench(lambda: x.amax(), warmup=100, rep=500, return_mode="median")
    t_copy = triton.testing.do_bench(lambda: y.copy_(x), warmup=100, rep=500, return_mode="median")
    b = n * 4
    print("%6d keys, %4d MB: sum %.4f ms %4.0f GB/s | amax %.4f ms %4.0f GB/s | copy %.4f ms %4.0f GB/s (read + write)"
          % (keys, b >> 20, t_sum, b / t_sum / 1e6, t_amax, b / t_amax / 1e6, t_copy, 2 * b / t_copy / 1e6))
