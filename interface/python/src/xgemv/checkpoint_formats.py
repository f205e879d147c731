"""GPTQ and AWQ checkpoint tensors in plain PyTorch (any device), written from their published
layouts: packing 4-bit codes into them, and reading them back as dense weights. The library's
own conversions (xgemv.QWeight.from_gptq / from_awq) are checked against these, and they make
test checkpoints.

GPTQ: qweight int32 [in/8, out], nibble i of qweight[r][o] the code of input 8r+i of output o;
qzeros int32 [groups, out/8], nibble i of qzeros[j][m] the zero point of output 8m+i (stored
minus one in GPTQ's original format); scales [groups, out]; g_idx int32 [in], the group of each
input. AWQ (GEMM packing): qweight int32 [in, out/8], nibble i of qweight[k][m] the code of
output 8m + AWQ_ORDER[i]; qzeros [groups, out/8] in the same order; scales [groups, out].
A weight is (q - z) * s.
"""
import torch

AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)
_SHIFTS = tuple(range(0, 32, 4))


def pack_nibbles(values, dim):
    """int32 words of 8 nibbles along dim (nibble i from element 8w + i)."""
    values = values.to(torch.int32) & 0xF
    moved = values.movedim(dim, -1)
    grouped = moved.reshape(*moved.shape[:-1], moved.shape[-1] // 8, 8)
    words = torch.zeros(grouped.shape[:-1], dtype=torch.int64, device=values.device)
    for i, shift in enumerate(_SHIFTS):
        words |= grouped[..., i].to(torch.int64) << shift
    # Two's complement: the top nibble's bit 31 is the sign of the int32.
    words = torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)
    return words.movedim(-1, dim)


def unpack_nibbles(words, dim):
    """uint8 values 0..15 of int32 words along dim, 8 per word (the inverse of pack_nibbles)."""
    # int32 shifts sign-extend; the mask keeps the nibble (a byte per value, no wider copy).
    moved = words.movedim(dim, -1).to(torch.int32)
    nibbles = torch.stack([((moved >> shift) & 0xF).to(torch.uint8) for shift in _SHIFTS], dim=-1)
    return nibbles.reshape(*moved.shape[:-1], moved.shape[-1] * 8).movedim(-1, dim)


def _awq_permute(codes, inverse=False):
    """Columns of [rows, out] in AWQ's nibble order within each run of 8."""
    rows, outputs = codes.shape
    order = torch.tensor(AWQ_ORDER, device=codes.device)
    runs = codes.reshape(rows, outputs // 8, 8)
    if inverse:
        result = torch.empty_like(runs)
        result[..., order] = runs
        return result.reshape(rows, outputs)
    return runs[..., order].reshape(rows, outputs)


def gptq_pack(codes, zeros, zeros_minus_one=True):
    """codes uint8 [out, in] (0..15), zeros uint8 [out, groups] -> (qweight, qzeros)."""
    qweight = pack_nibbles(codes.t(), 0)
    stored = (zeros.to(torch.int32) - 1) & 0xF if zeros_minus_one else zeros
    return qweight, pack_nibbles(stored.t(), 1)


def gptq_unpack(qweight, qzeros, scales, g_idx=None, zeros_minus_one=True):
    """The dense fp32 weight [out, in] of GPTQ tensors (w = (q - z) * s of the input's group;
    qzeros None: z = 8)."""
    codes = unpack_nibbles(qweight, 0).t().to(torch.float32)  # [out, in]
    outputs, inputs = codes.shape
    groups = scales.shape[0]
    if g_idx is None:
        g_idx = torch.arange(inputs, device=codes.device) // (inputs // groups)
    g_idx = g_idx.to(torch.int64)
    if qzeros is None:
        zeros = torch.full((groups, outputs), 8.0, device=codes.device)
    else:
        zeros = unpack_nibbles(qzeros, 1).to(torch.float32)  # [groups, out]
        if zeros_minus_one:
            zeros = (zeros + 1) % 16
    return (codes - zeros[g_idx].t()) * scales.to(torch.float32)[g_idx].t()


def awq_pack(codes, zeros):
    """codes uint8 [out, in], zeros uint8 [out, groups] -> (qweight, qzeros)."""
    return (pack_nibbles(_awq_permute(codes.t()), 1), pack_nibbles(_awq_permute(zeros.t()), 1))


def awq_codes(words):
    """The 4-bit values uint8 [rows, out] of AWQ-packed int32 words [rows, out/8]."""
    return _awq_permute(unpack_nibbles(words, 1), inverse=True)


def awq_unpack(qweight, qzeros, scales):
    """The dense fp32 weight [out, in] of AWQ tensors."""
    codes = awq_codes(qweight).to(torch.float32)  # [in, out]
    zeros = awq_codes(qzeros).to(torch.float32)
    inputs = codes.shape[0]
    group = torch.arange(inputs, device=codes.device) // (inputs // scales.shape[0])
    return ((codes - zeros[group]) * scales.to(torch.float32)[group]).t()
