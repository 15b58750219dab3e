"""bench/neptune/ops.py - Neptune's ten attention operators (Table 1 of the paper) in PyTorch,
written from their definition and independent of tessel: the float64 reference that
bench/neptune/bench.py checks tessel's kernels against, and the peers it times them against
(FlexAttention, SDPA, the unfused PyTorch expression).

The contract (the one tessel's definition implements too): Q [B, H, S_q, D], K and V
[B, Hkv, S_kv, D], float16; O [B, H, S_q, D] float16; scale = 1/sqrt(D). Query row i sits at
position pos_i = i + (S_kv - S_q), so decode's single query is at S_kv - 1. Query head h reads
KV head h // (H // Hkv). s = (q . k) * scale, then per op:
    global   no mask
    causal   keep j <= pos_i
    alibi    s + slope_h * (j - pos_i), slope_h = 2 ** (-8 * (h + 1) / H); causal
    gqa      H query heads over Hkv KV heads; causal
    softcap  s = 50 * tanh(s / 50); GQA heads; causal
    window   keep pos_i - window < j <= pos_i
Masked scores are -inf; softmax over j; o = softmax(s) @ v.

A case is the dict a case.py manifest defines (op, mode, B, H, Hkv, S_q, S_kv, D, window).
"""
import math

import torch

OPS = ("global", "causal", "alibi", "gqa", "softcap", "window")
CAUSAL = ("causal", "alibi", "gqa", "softcap")   # window is causal too, with its own lower edge
SOFTCAP = 50.0

# the reference works on this many float64 scores at a time (1 GiB), so that S = 16384 fits
REF_CHUNK = 1 << 27

# the unfused expression is skipped when its scores (float16 product, float32 scores and
# probabilities, float16 probabilities: 12 bytes each) would take more than this
UNFUSED_LIMIT = 48 << 30


def shape_of(case):
    return (case["B"], case["H"], case["Hkv"], case["S_q"], case["S_kv"], case["D"])


def slopes(H, device, dtype):
    """ALiBi's per-head slopes, slope_h = 2 ** (-8 * (h + 1) / H)"""
    h = torch.arange(H, device=device, dtype=dtype)
    return torch.exp2(-8.0 * (h + 1) / H)


def keep_mask(op, case, i, j):
    """which (row, key) pairs survive the mask: i are query rows, j keys (broadcastable int64
    tensors); None where the op keeps everything"""
    pos = i + (case["S_kv"] - case["S_q"])
    if op == "global":
        return None
    if op == "window":
        return (j <= pos) & (j > pos - case["window"])
    return j <= pos


def modify(op, case, s, h, i, j):
    """the score modification before the mask: s [..., H, rows, keys], h [H, 1, 1] head
    indices, i [rows, 1] query rows, j [keys] keys"""
    if op == "alibi":
        pos = i + (case["S_kv"] - case["S_q"])
        return s + slopes(case["H"], s.device, s.dtype)[h] * (j - pos).to(s.dtype)
    if op == "softcap":
        return SOFTCAP * torch.tanh(s / SOFTCAP)
    return s


def reference(op, case, q, k, v):
    """the operator in float64, on q's device, in chunks of query rows so that the scores of
    the largest prefill (S = 16384) never exist at once. Heads are grouped by KV head
    (q [H, R, D] viewed as [Hkv, G*R, D]) so K and V are never repeated."""
    B, H, Hkv, S_q, S_kv, D = shape_of(case)
    G = H // Hkv
    scale = 1.0 / math.sqrt(D)
    dev = q.device
    rows = max(1, min(S_q, REF_CHUNK // (H * S_kv)))
    out = torch.empty((B, H, S_q, D), dtype=torch.float64, device=dev)
    h = torch.arange(H, device=dev).view(H, 1, 1)
    j = torch.arange(S_kv, device=dev)
    for b in range(B):
        kb = k[b].double()                  # [Hkv, S_kv, D]
        vb = v[b].double()
        for r0 in range(0, S_q, rows):
            R = min(rows, S_q - r0)
            qb = q[b, :, r0:r0 + R].double().reshape(Hkv, G * R, D)
            s = (qb @ kb.transpose(1, 2)).view(H, R, S_kv) * scale
            i = torch.arange(r0, r0 + R, device=dev).view(R, 1)
            s = modify(op, case, s, h, i, j)
            keep = keep_mask(op, case, i, j)
            if keep is not None:
                s = s.masked_fill(~keep, float("-inf"))
            p = torch.softmax(s, dim=-1).view(Hkv, G * R, S_kv)
            out[b, :, r0:r0 + R] = (p @ vb).view(H, R, D)
    return out


def kept_keys(case):
    """the number of (row, key) pairs the mask keeps, summed over the rows of one head"""
    S_q, S_kv, op = case["S_q"], case["S_kv"], case["op"]
    off = S_kv - S_q
    if op == "global":
        return S_q * S_kv
    total = 0
    for i in range(S_q):
        n = i + off + 1
        if op == "window":
            n = min(n, case["window"])
        total += n
    return total


def useful_flops(case):
    """4 * B * H * D per kept (row, key) pair: two products of 2 FLOPs each"""
    return 4 * case["B"] * case["H"] * case["D"] * kept_keys(case)


def kv_bytes(case):
    """K and V, read once: decode's minimum traffic"""
    B, H, Hkv, S_q, S_kv, D = shape_of(case)
    return 2 * B * Hkv * S_kv * D * 2


# ---- peers ----
# Each builder returns a function of (q, k, v) -> o, with what does not depend on the data
# (block masks, the mask and bias of the unfused expression) built once here, outside the
# timing, or raises NotImplementedError with the reason the peer cannot run the operator.

def flex_peer(case, device, compiled=True):
    """torch.compile(flex_attention): a mask_mod and a block mask for causal and window, a
    score_mod for ALiBi and SoftCap, enable_gqa for GQA heads. Decode (S_q = 1) runs through
    the same call: FlexAttention picks its decoding kernel for short queries itself.
    compiled=False runs it eagerly (slow, any device): selftest.py checks the mods that way."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    B, H, Hkv, S_q, S_kv, D = shape_of(case)
    op = case["op"]
    off = S_kv - S_q
    window = case.get("window", 0)

    def causal(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx + off

    def windowed(b, h, q_idx, kv_idx):
        pos = q_idx + off
        return (kv_idx <= pos) & (kv_idx > pos - window)

    slope = slopes(H, device, torch.float32)

    def alibi(score, b, h, q_idx, kv_idx):
        return score + slope[h] * (kv_idx - (q_idx + off))

    def softcap(score, b, h, q_idx, kv_idx):
        return SOFTCAP * torch.tanh(score / SOFTCAP)

    # decode's single query sits at the last key: causal keeps every key, so no block mask
    mask_mod = windowed if op == "window" else causal if op in CAUSAL else None
    block_mask = None
    if mask_mod is not None and not (S_q == 1 and op != "window"):
        block_mask = create_block_mask(mask_mod, None, None, S_q, S_kv, device=device)
    score_mod = alibi if op == "alibi" else softcap if op == "softcap" else None
    # fullgraph: a graph break would fall back to eager and time something else
    flex = torch.compile(flex_attention, fullgraph=True, dynamic=False) if compiled else flex_attention
    gqa = H != Hkv
    scale = 1.0 / math.sqrt(D)

    def run(q, k, v):
        return flex(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=scale,
                    enable_gqa=gqa)
    return run


def sdpa_peer(case, device):
    """scaled_dot_product_attention, where the operator needs no materialized mask or bias:
    global, causal (is_causal for prefill; decode keeps every key) and gqa (enable_gqa).
    The math backend is excluded, so that a shape no fused backend takes is reported rather
    than timed on a path that materializes the scores."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, H, Hkv, S_q, S_kv, D = shape_of(case)
    op = case["op"]
    if op not in ("global", "causal", "gqa"):
        raise NotImplementedError("n/a: needs a materialized mask or bias")
    # is_causal aligns the mask top-left, which is pos_i = i only when S_q == S_kv
    is_causal = op != "global" and S_q > 1
    if is_causal and S_q != S_kv:
        raise NotImplementedError("n/a: is_causal is top-left aligned and S_q != S_kv")
    backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                SDPBackend.CUDNN_ATTENTION]
    if device == "cpu" or str(device) == "cpu":
        backends.append(SDPBackend.MATH)    # --cpu mode only checks; CPU has no fused kernels
    gqa = H != Hkv
    scale = 1.0 / math.sqrt(D)
    F = torch.nn.functional

    def run(q, k, v):
        with sdpa_kernel(backends):
            if gqa:
                return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale,
                                                      enable_gqa=True)
            return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale)
    return run


def unfused_peer(case, device):
    """the operator as one writes it in PyTorch: a float16 matmul, scores in float32, the
    modification, the mask, softmax, a float16 matmul. KV heads are repeated for GQA."""
    B, H, Hkv, S_q, S_kv, D = shape_of(case)
    op = case["op"]
    need = 12 * B * H * S_q * S_kv
    if need > UNFUSED_LIMIT:
        raise NotImplementedError("n/a: its scores would take %.0f GB" % (need / 1e9))
    G = H // Hkv
    scale = 1.0 / math.sqrt(D)
    i = torch.arange(S_q, device=device).view(S_q, 1)
    j = torch.arange(S_kv, device=device)
    keep = keep_mask(op, case, i, j)
    masked = None if keep is None or bool(keep.all()) else ~keep
    bias = None
    if op == "alibi":
        dist = (j - (i + (S_kv - S_q))).to(torch.float32)           # [S_q, S_kv]
        bias = (slopes(H, device, torch.float32).view(H, 1, 1), dist)

    def run(q, k, v):
        if G > 1:
            k = k.repeat_interleave(G, dim=1)
            v = v.repeat_interleave(G, dim=1)
        s = torch.matmul(q, k.transpose(-1, -2)).float() * scale
        if bias is not None:
            s = s + bias[0] * bias[1]
        if op == "softcap":
            s = SOFTCAP * torch.tanh(s / SOFTCAP)
        if masked is not None:
            s = s.masked_fill(masked, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return torch.matmul(p.to(q.dtype), v)
    return run


PEERS = (("flex", flex_peer), ("sdpa", sdpa_peer), ("unfused", unfused_peer))
