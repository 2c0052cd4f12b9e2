"""Sparse-DFOP: DFOP on a random projection of sparse inputs (SPEC.md section 2).

For high-dimensional sparse inputs x in R^D (bag of words, D up to 10^6) the
learner runs the DFOP update of SPEC.md section 1 on the compressed input

    psi_t = M x_t,   M in R^{d x D},  M_ij ~ N(0, 1/d) i.i.d.,   d << D,

with parameter v in R^d and prediction psi_t^T v. The DFOP step itself is
:func:`edgereg.dfop._dfop_step` (imported, not copied); this module only adds
the projection. Because x is sparse,

    psi_t = sum_{j : x_tj != 0} x_tj M[:, j],

so a step costs O(nnz(x) d + d^2), whatever D is: each non-zero adds one column
of M (length d) into a preallocated work array.

Where M lives (the ``projection`` argument):

* ``"hashed"`` (default): column j is regenerated on demand from a
  counter-based hash of (seed, j), 8 entries at a time. With ``mix64`` the
  splitmix64 finaliser, ``G`` the 64-bit golden ratio and
  ``t = mix64(seed) ^ mix64(j + G)``, the column keys are
  ``key_j = mix64(t)`` and ``key2_j = mix64(t ^ S2)``; entry i gets two
  32-bit words ``h = lowbias32(a + i c)`` and ``h2 = lowbias32(a2 + i c2)``
  (mod 2^32; ``lowbias32`` is Wellons' 32-bit finaliser, (a, c | 1) and
  (a2, c2 | 1) the low and high halves of key_j and key2_j). They drive
  Marsaglia and Tsang's ziggurat with 1024 layers: layer L = bits 0-9 of h,
  sign = bit 10 of h, u = ((h2 >> 1) | 1) 2^-31 (the midpoints of 2^30 equal
  cells of (0, 1)), abscissa x = u W[L]. The draw is accepted at once when
  x < T[L] (99.57% of entries: one exact product and a comparison, done on 8
  lanes); otherwise the entry takes the ziggurat's exact slow path (the wedge
  test, Marsaglia's tail beyond r = 4.0388, fresh draws) with uniforms from a
  second stream ``mix64((key_j ^ S) + i 2^32 + n G)``, n = 1, 2, ..., so that
  every entry is a pure function of (seed, j, i), whatever order or vector
  width computes it. ``M_ij = +-x / sqrt(d)``. The tables (W, T and the
  heights f(x_L)) are computed at import in 40-digit decimal arithmetic. Nothing
  of M is stored: the model memory is the DFOP state of dimension d, and M is
  bit-identical in every run, process, machine and after save/load (integer
  arithmetic, exact int -> float conversions, IEEE products and comparisons;
  ``exp``/``log`` are only used on the 0.43% slow path, where another libm
  could only matter for a comparison within one ulp).
* ``"gaussian"``: the *same* matrix as ``"hashed"`` for the same seed, but
  materialised once at construction and stored in the state as ``M_T`` of
  shape (D, d) (row j of ``M_T`` is column j of M, so a column is contiguous).
  Memory D d itemsize bytes on top of the DFOP state; a step then reads
  columns instead of hashing (faster for small D, and the state file holds M
  itself for exact reproduction elsewhere).
* ``"rademacher"``: entries +-1/sqrt(d), one hash bit each (64 entries per
  64-bit hash), ``M_ij = (1 - 2 b_ij) / sqrt(d)`` with b_ij bit (i mod 64) of
  ``mix64(key_j + (i // 64 + 1) * G)``. Also satisfies the restricted isometry
  property; the cheapest to generate. Nothing stored.

Memory per projection (float64, d = n_components, D = n_features):
``hashed``/``rademacher``: 8 (d^2 + 6d + 32d) + 40 + 64 ceil(d / 8) bytes
(d = 100: 111.3 KB, for any D), of which 32 d 8 bytes (25.6 KB) are
``work_psi_block``, the psi of a chunk of 32 rows in ``learn_many``, and
64 ceil(d / 8) bytes (832 B) ``work_hash``, the two hash words of the entries
of one column; ``gaussian``: that plus 8 D d (D = 1000, d = 100: 911 KB).

The hashed generator's 8-lane kernels (hashing, and the ziggurat's fast path
fused with ``psi += x_j M[:, j]``) are numba intrinsics emitting
target-independent LLVM IR: LLVM does not vectorise them from Python loops.
On a 2-core Zen 3 (AVX2) a hashed column of d = 100 costs ~145 ns, and
``learn_many`` runs ~55,000 samples/s at D = 10^6, nnz = 100, d = 100 (DFOP's
step on d = 100 is ~2.3 us of the ~18).

``learn_many`` projects ``BLOCK_ROWS`` (32) rows at a time into
``work_psi_block`` and hands the chunk to DFOP's fused block kernel
``_dfop_learn_many`` (one pass over P per step, which also forms
P_new psi_{t+1}); ``learn_one`` projects into ``work_psi`` and calls DFOP's
per-sample kernel. The two are bit-identical (DFOP guarantees it for its
kernels; the tests check it across chunk boundaries).

``recover`` estimates the uncompressed weights w (length D) from v by basis
pursuit (``min ||w||_1 s.t. M w = v``, a linear program for HiGHS) or
orthogonal matching pursuit, off the per-step path.
"""

from __future__ import annotations

import decimal
import math
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core import config as numba_config
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from . import dfop as _dfop_module
from ._jit import kernel, recompile_with
from ._validate import (
    _NUMERIC_KINDS,
    as_matrix,
    as_scalar,
    check_int,
    label_to_sign,
)

# DFOP's own kernels: its per-sample step (with the prior refresh) and its
# prediction, so that predict_one(x) == the prediction learn_one returns, bit
# for bit, whatever arithmetic DFOP uses.
from .dfop import (
    DFOP,
    OK,
    _dfop_learn_many,
    _dfop_learn_one,
    _dfop_predict_one,
    refresh_period,
)

__all__ = ["SparseDFOP", "SparseDFOPState"]

_PROJECTIONS = ("gaussian", "hashed", "rademacher")
# learn_many projects this many rows at a time into the state's work_psi_block,
# then runs DFOP's fused block kernel on them (one pass over P per step).
BLOCK_ROWS = 32
# Kernel codes: where a column of M comes from.
STORED = 0  # row j of the state's M_T
HASHED = 1  # ziggurat normals from the hash
RADEMACHER = 2  # +-1 from the hash bits

_MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_FALLBACK_SALT = np.uint64(0xD1B54A32D192ED03)
_SECOND_SALT = np.uint64(0x8CB92BA72F3D8DD7)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_LOW32 = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)
_NO_INDICES = np.zeros(0, dtype=np.int64)  # the indices argument of a dense row

# ------------------------------------------------------------------ ziggurat
# Marsaglia & Tsang's ziggurat with 1024 layers. (r, v): the right edge of the
# bottom rectangle and the common area of the layers, solved to 40 digits so
# that the top layer closes (x_1 (1 - f(x_1)) = v to 1e-40).
_ZIG_BITS = 10
_ZIG_LAYERS = 1 << _ZIG_BITS
_ZIG_R = "4.038849846109504522714423405335931204701"
_ZIG_V = "0.001226324646353088072885370927737127061892"
_LAYER = np.uint64(_ZIG_LAYERS - 1)
_SIGN_BIT = np.uint64(_ZIG_BITS)


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Tables of the 1024-layer ziggurat for N(0, 1) (f(x) = exp(-x^2 / 2)).

    Edges x_1023 = r > x_1022 > ... > x_1 > x_0 = 0 of equal-area layers
    (x_e (f(x_{e-1}) - f(x_e)) = v). Layer L >= 1 is the rectangle
    [0, x_L] x [f(x_L), f(x_{L-1})]; layer 0 is the base strip [0, v / f(r)] x
    [0, f(r)] together with the tail beyond r. A draw (L, u) has abscissa
    x = u W[L] (W[0] = v / f(r), W[L] = x_L) and is accepted at once when
    x < T[L] (T[0] = r, T[L] = x_{L-1}: the point lies under the curve), which
    happens with probability 99.57%.

    Computed in decimal arithmetic (40 digits; ``Decimal.exp/ln/sqrt`` are
    correctly rounded), so the float64 tables are the same on every platform,
    whatever its libm. Returns (tab, W, F, r): ``tab`` interleaves W[L] 2^-31
    and T[L] (the 16 bytes the vector kernel loads per entry), F[e] = f(x_e).
    """
    n = _ZIG_LAYERS
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        two = decimal.Decimal(2)
        r = decimal.Decimal(_ZIG_R)
        v = decimal.Decimal(_ZIG_V)

        def f(x: decimal.Decimal) -> decimal.Decimal:
            return (-(x * x) / two).exp()

        x = [decimal.Decimal(0)] * n
        x[n - 1] = r
        for e in range(n - 1, 1, -1):
            x[e - 1] = (-two * (v / x[e] + f(x[e])).ln()).sqrt()
        width = [v / f(r)] + x[1:]
        inner = [r] + x[:-1]
        heights = [f(e) for e in x]
    W = np.array([float(w) for w in width])
    T = np.array([float(t) for t in inner])
    F = np.array([float(y) for y in heights])
    tab = np.empty(2 * n)
    tab[0::2] = W * 2.0**-31  # exact: a power-of-two scaling
    tab[1::2] = T
    return tab, W, F, float(r)


# Module constants (16 + 8 + 8 KB): numba freezes them into the compiled code.
_ZTAB, _ZW, _ZF, _ZR = _ziggurat_tables()


class SparseDFOPState(NamedTuple):
    """Fixed memory of a SparseDFOP model (d = n_components, D = n_features)."""

    w: np.ndarray  # (d,) weights v in the compressed space
    P: np.ndarray  # (d, d) DFOP's inverse discounted correlation
    forgotten: np.ndarray  # float64 (1,): DFOP's prior bookkeeping (sum of mu)
    M_T: np.ndarray  # (D, d) for "gaussian" (row j = column j of M), else (0, d)
    work_psi: np.ndarray  # (d,) scratch: psi = M x
    work_px: np.ndarray  # (d,) scratch of the DFOP step
    work_v: np.ndarray  # (d,) scratch of DFOP's prior refresh
    work_col: np.ndarray  # (d,) scratch: one generated column of M
    counts: np.ndarray  # int64 (4,): learnt, skipped, DFOP's refresh counters
    work_next: np.ndarray  # (d,) scratch of DFOP's fused block kernel (P_new x_{t+1})
    work_psi_block: np.ndarray  # (BLOCK_ROWS, d) scratch: psi of a chunk of rows (learn_many)
    work_hash: np.ndarray  # uint32 (2 d8,), d8 = 8 ceil(d / 8): the two hash words of a column


# ------------------------------------------------------------------ hashing
@kernel
def _mix64(z):
    """splitmix64's finaliser (Stafford variant 13): a bijection of uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@kernel
def _column_key(seed_key, j):
    return _mix64(seed_key ^ _mix64(np.uint64(j) + _GOLDEN))


@kernel
def _uniform53(h):
    """A uniform in (0, 1) from the top 53 bits of a 64-bit hash."""
    # Through int64: x86 converts signed integers to double in one instruction.
    return (np.float64(np.int64(h >> _S11)) + 0.5) * (1.0 / 9007199254740992.0)


# The 8-lane kernels are written in LLVM IR (numba intrinsics): LLVM does not
# vectorise them from Python loops, since numba widens uint32 arithmetic to 64
# bits and the per-lane table reads defeat its cost model. The IR is
# target-independent (no x86 intrinsics): integer arithmetic, exact int ->
# float conversions and IEEE multiplications and additions without fast-math
# flags, so every target and vector width computes the bits the scalar code
# (and the tests' pure-Python reference) computes.
_I16 = ir.IntType(16)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F64 = ir.DoubleType()
_V8I32 = ir.VectorType(_I32, 8)
_V8I64 = ir.VectorType(_I64, 8)
_V8F64 = ir.VectorType(_F64, 8)
_V2F64 = ir.VectorType(_F64, 2)


def _ir_lanes(*values: int) -> ir.Constant:
    return ir.Constant(ir.VectorType(_I32, len(values)), list(values))


def _ir_fill(vty: ir.VectorType, value: Any) -> ir.Constant:
    return ir.Constant(vty, [value] * vty.count)


def _ir_splat(builder: ir.IRBuilder, value: ir.Value, vty: ir.VectorType) -> ir.Value:
    undef = ir.Constant(vty, ir.Undefined)
    one = builder.insert_element(undef, value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, undef, _ir_lanes(*[0] * vty.count))


def _ir_data(context, builder, ty, value):
    return context.make_array(ty)(context, builder, value).data


def _ir_lowbias32(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Wellons' lowbias32 finaliser on 8 lanes (a bijection of uint32)."""
    x = builder.xor(x, builder.lshr(x, _ir_fill(_V8I32, 16)))
    x = builder.mul(x, _ir_fill(_V8I32, 0x7FEB352D))
    x = builder.xor(x, builder.lshr(x, _ir_fill(_V8I32, 15)))
    x = builder.mul(x, _ir_fill(_V8I32, 0x846CA68B))
    return builder.xor(x, builder.lshr(x, _ir_fill(_V8I32, 16)))


def _is_vector(ty, dtypes) -> bool:
    return isinstance(ty, types.Array) and ty.ndim == 1 and ty.layout == "C" and ty.dtype in dtypes


@intrinsic
def _hash_words(typingctx, key, key2, hbuf):
    """The two hash words of every entry of a column, for i < d8 = len(hbuf) / 2:

    hbuf[i] = lowbias32(a + i c), hbuf[d8 + i] = lowbias32(a2 + i c2) (mod 2^32),
    with (a, c | 1) and (a2, c2 | 1) the low and high 32-bit halves of key and key2.
    """
    if not _is_vector(hbuf, (types.uint32,)):
        return None
    sig = types.void(types.uint64, types.uint64, hbuf)

    def codegen(context, builder, signature, args):
        key, key2, hbuf = args
        array = context.make_array(signature.args[2])(context, builder, hbuf)
        half = builder.lshr(builder.extract_value(array.shape, 0), ir.Constant(_I64, 1))
        streams = []
        for k in (key, key2):
            start = builder.trunc(k, _I32)
            step = builder.or_(builder.trunc(builder.lshr(k, ir.Constant(_I64, 32)), _I32),
                               ir.Constant(_I32, 1))
            lanes = builder.mul(_ir_splat(builder, step, _V8I32), _ir_lanes(*range(8)))
            streams.append((start, step, lanes))
        nblocks = builder.lshr(half, ir.Constant(_I64, 3))
        with cgutils.for_range(builder, nblocks) as loop:
            i0 = builder.shl(loop.index, ir.Constant(_I64, 3))
            ptr = builder.gep(array.data, [i0])
            for start, step, lanes in streams:
                first = builder.add(start, builder.mul(builder.trunc(i0, _I32), step))
                h = _ir_lowbias32(builder, builder.add(_ir_splat(builder, first, _V8I32), lanes))
                builder.store(h, builder.bitcast(ptr, _V8I32.as_pointer()), align=4)
                ptr = builder.gep(ptr, [half])
        return context.get_dummy_value()

    return sig, codegen


def _ir_gauss8(context, builder, i0, hbuf_type, hbuf, tab_type, tab, scale):
    """N(0, 1) scale of entries i0..i0+7: (values <8 x double>, rejected <8 x i1>).

    Lane l, with words h = hbuf[i], h2 = hbuf[d8 + i]: layer L = h & 1023,
    sign bit 10 of h, k = (h2 >> 1) | 1 (so u = k 2^-31 in (0, 1));
    w = +-k (W[L] 2^-31), rejected unless |w| < T[L]; value w * scale.
    """
    array = context.make_array(hbuf_type)(context, builder, hbuf)
    half = builder.lshr(builder.extract_value(array.shape, 0), ir.Constant(_I64, 1))
    hptr = builder.gep(array.data, [i0])
    tptr = _ir_data(context, builder, tab_type, tab)
    # Table rows (W[L] 2^-31, T[L]) lane by lane: scalar loads of the layer bits
    # keep the indices out of the vector unit (no lane extracts).
    rows = []
    for lane in range(8):
        word = builder.load(builder.gep(hptr, [ir.Constant(_I64, lane)]), align=4)
        layer = builder.and_(builder.trunc(word, _I16), ir.Constant(_I16, _ZIG_LAYERS - 1))
        row = builder.gep(tptr, [builder.shl(builder.zext(layer, _I64), ir.Constant(_I64, 1))])
        rows.append(builder.load(builder.bitcast(row, _V2F64.as_pointer()), align=8))
    quads = [builder.shuffle_vector(rows[2 * q], rows[2 * q + 1], _ir_lanes(0, 1, 2, 3))
             for q in range(4)]
    lo = builder.shuffle_vector(quads[0], quads[1], _ir_lanes(*range(8)))
    hi = builder.shuffle_vector(quads[2], quads[3], _ir_lanes(*range(8)))
    both = builder.shuffle_vector(lo, hi, _ir_lanes(*range(16)))
    width = builder.shuffle_vector(both, both, _ir_lanes(*range(0, 16, 2)))
    inner = builder.shuffle_vector(both, both, _ir_lanes(*range(1, 16, 2)))

    h = builder.load(builder.bitcast(hptr, _V8I32.as_pointer()), align=4)
    h2 = builder.load(builder.bitcast(builder.gep(hptr, [half]), _V8I32.as_pointer()), align=4)
    k = builder.or_(builder.lshr(h2, _ir_fill(_V8I32, 1)), _ir_fill(_V8I32, 1))
    sign = builder.ashr(builder.shl(h, _ir_fill(_V8I32, 31 - _ZIG_BITS)), _ir_fill(_V8I32, 31))
    k = builder.sub(builder.xor(k, sign), sign)  # +-k (sign is 0 or -1)
    w = builder.fmul(builder.sitofp(k, _V8F64), width)
    absw = builder.bitcast(
        builder.and_(builder.bitcast(w, _V8I64), _ir_fill(_V8I64, (1 << 63) - 1)), _V8F64
    )
    rejected = builder.fcmp_unordered(">=", absw, inner)  # not (|w| < T[L])
    values = builder.fmul(w, _ir_splat(builder, scale, _V8F64))
    return values, rejected


def _ir_cast(context, builder, values, dtype):
    """float64 lanes -> the array's element type (round to nearest, as a store would)."""
    if dtype == types.float64:
        return values
    return builder.fptrunc(values, ir.VectorType(context.get_value_type(dtype), 8))


def _ir_mask(builder, rejected):
    return builder.zext(builder.bitcast(rejected, ir.IntType(8)), _I64)


_FLOATS = (types.float32, types.float64)


@intrinsic
def _gauss8_store(typingctx, i0, hbuf, tab, scale, out):
    """out[i0:i0+8] = N(0, 1) scale from the hashes; returns the mask of rejected lanes.

    Rejected lanes hold a meaningless value: the caller overwrites them.
    """
    if not (_is_vector(hbuf, (types.uint32,)) and _is_vector(tab, (types.float64,))
            and _is_vector(out, _FLOATS)):
        return None
    sig = types.int64(types.intp, hbuf, tab, types.float64, out)

    def codegen(context, builder, signature, args):
        i0, hbuf, tab, scale, out = args
        hbuf_type, tab_type, _, out_type = signature.args[1:]
        values, rejected = _ir_gauss8(context, builder, i0, hbuf_type, hbuf, tab_type, tab, scale)
        values = _ir_cast(context, builder, values, out_type.dtype)
        ptr = builder.gep(_ir_data(context, builder, out_type, out), [i0])
        builder.store(values, builder.bitcast(ptr, values.type.as_pointer()),
                      align=out_type.dtype.bitwidth // 8)
        return _ir_mask(builder, rejected)

    return sig, codegen


@intrinsic
def _gauss8_add(typingctx, i0, skip, hbuf, tab, scale, xj, psi):
    """psi[i0 + l] += xj * (N(0, 1) scale) for the accepted lanes l >= skip.

    Returns the mask of the rejected lanes l >= skip. Lanes below ``skip`` and
    rejected lanes get ``psi + (-0.0)``, which leaves psi bit for bit as it
    was; the caller then adds xj times the fixed-up value of a rejected lane,
    so psi ends as ``psi[i] += xj * col[i]`` would leave it.
    """
    if not (_is_vector(hbuf, (types.uint32,)) and _is_vector(tab, (types.float64,))
            and _is_vector(psi, _FLOATS) and xj == psi.dtype):
        return None
    sig = types.int64(types.intp, types.intp, hbuf, tab, types.float64, xj, psi)

    def codegen(context, builder, signature, args):
        i0, skip, hbuf, tab, scale, xj, psi = args
        hbuf_type, tab_type, _, _, psi_type = signature.args[2:]
        values, rejected = _ir_gauss8(context, builder, i0, hbuf_type, hbuf, tab_type, tab, scale)
        lanes = builder.icmp_signed(
            ">=", _ir_lanes(*range(8)), _ir_splat(builder, builder.trunc(skip, _I32), _V8I32)
        )
        rejected = builder.and_(rejected, lanes)
        values = _ir_cast(context, builder, values, psi_type.dtype)
        vty = values.type
        terms = builder.fmul(_ir_splat(builder, xj, vty), values)
        keep = builder.and_(lanes, builder.not_(rejected))
        terms = builder.select(keep, terms, _ir_fill(vty, -0.0))
        ptr = builder.gep(_ir_data(context, builder, psi_type, psi), [i0])
        ptr = builder.bitcast(ptr, vty.as_pointer())
        align = psi_type.dtype.bitwidth // 8
        builder.store(builder.fadd(builder.load(ptr, align=align), terms), ptr, align=align)
        return _ir_mask(builder, rejected)

    return sig, codegen


# With NUMBA_DISABLE_JIT=1 the intrinsics above have no Python body. These
# plain NumPy versions compute the same bits lane by lane (the same integer
# hash, the same IEEE products in the same order, the same rounding to the
# output dtype), so that the default projection runs under a debugger and
# under coverage; the JIT-off test pass checks them against the compiled run.
_MASK32 = np.uint64(0xFFFFFFFF)


def _lowbias32_py(x: np.ndarray) -> np.ndarray:
    """``_ir_lowbias32`` on uint32 values held in uint64 (products < 2^64)."""
    x = x ^ (x >> np.uint64(16))
    x = (x * np.uint64(0x7FEB352D)) & _MASK32
    x = x ^ (x >> np.uint64(15))
    x = (x * np.uint64(0x846CA68B)) & _MASK32
    return x ^ (x >> np.uint64(16))


def _hash_words_py(key, key2, hbuf):
    """``_hash_words`` for NUMBA_DISABLE_JIT."""
    half = hbuf.shape[0] // 2
    count = (half >> 3) << 3
    index = np.arange(count, dtype=np.uint64)
    for offset, k in ((0, int(key)), (half, int(key2))):
        start = np.uint64(k & 0xFFFFFFFF)
        step = np.uint64(((k >> 32) | 1) & 0xFFFFFFFF)
        hbuf[offset:offset + count] = _lowbias32_py((start + index * step) & _MASK32)


def _gauss8_py(i0, hbuf, tab, scale, dtype):
    """``_ir_gauss8`` for NUMBA_DISABLE_JIT: (values in ``dtype``, rejected mask)."""
    half = hbuf.shape[0] // 2
    values = np.empty(8, dtype=dtype)
    rejected = 0
    for lane in range(8):
        h, h2 = int(hbuf[i0 + lane]), int(hbuf[half + i0 + lane])
        layer = h & (_ZIG_LAYERS - 1)
        k = (h2 >> 1) | 1
        if (h >> _ZIG_BITS) & 1:
            k = -k
        w = np.float64(k) * tab[2 * layer]
        if not abs(w) < tab[2 * layer + 1]:
            rejected |= 1 << lane
        values[lane] = w * np.float64(scale)
    return values, rejected


def _gauss8_store_py(i0, hbuf, tab, scale, out):
    """``_gauss8_store`` for NUMBA_DISABLE_JIT."""
    values, rejected = _gauss8_py(i0, hbuf, tab, scale, out.dtype)
    out[i0:i0 + 8] = values
    return rejected


def _gauss8_add_py(i0, skip, hbuf, tab, scale, xj, psi):
    """``_gauss8_add`` for NUMBA_DISABLE_JIT (lanes not added are left as they were)."""
    values, rejected = _gauss8_py(i0, hbuf, tab, scale, psi.dtype)
    rejected &= ~((1 << skip) - 1) & 0xFF
    for lane in range(skip, 8):
        if not (rejected >> lane) & 1:
            psi[i0 + lane] = psi[i0 + lane] + psi.dtype.type(xj) * values[lane]
    return rejected


def _trailing_zeros_py(x):
    """``trailing_zeros`` for NUMBA_DISABLE_JIT (x > 0)."""
    x = int(x)
    return (x & -x).bit_length() - 1


if numba_config.DISABLE_JIT:
    _hash_words = _hash_words_py  # noqa: F811 - the intrinsics' plain-Python twins
    _gauss8_store = _gauss8_store_py  # noqa: F811
    _gauss8_add = _gauss8_add_py  # noqa: F811
    trailing_zeros = _trailing_zeros_py  # noqa: F811


@kernel
def _ziggurat_slow(key, i, h, h2):
    """N(0, 1) for an entry the fast test rejected (0.43% of them).

    Fresh uniforms come from a second counter-based stream,
    mix64((key ^ salt) + i 2^32 + n G), n = 1, 2, ..., so the value stays a
    pure function of (seed, j, i).
    """
    h = np.uint64(h)
    layer = np.int64(h & _LAYER)
    neg = (h >> _SIGN_BIT) & _ONE
    x = np.float64(np.int64((np.uint64(h2) >> _ONE) | _ONE)) * _ZTAB[2 * layer]
    base = (key ^ _FALLBACK_SALT) + np.uint64(i) * np.uint64(0x100000000)
    n = np.uint64(0)
    t = 0.0
    while True:
        if layer == 0:
            if x < _ZR:  # the base strip inside r
                break
            while True:  # the tail beyond r: Marsaglia's exponential method
                n += _ONE
                t = -math.log(_uniform53(_mix64(base + n * _GOLDEN))) / _ZR
                n += _ONE
                e = -math.log(_uniform53(_mix64(base + n * _GOLDEN)))
                if e + e >= t * t:
                    break
            x = _ZR + t
            break
        if x < _ZTAB[2 * layer + 1]:  # inside the layer below (after a redraw)
            break
        n += _ONE
        y = _ZF[layer] + _uniform53(_mix64(base + n * _GOLDEN)) * (_ZF[layer - 1] - _ZF[layer])
        if y < math.exp(-0.5 * x * x):  # the wedge: under the curve
            break
        n += _ONE  # rejected: a fresh draw (layer bits 0-9, sign bit 10, u bits 11-63)
        g = _mix64(base + n * _GOLDEN)
        layer = np.int64(g & _LAYER)
        neg = (g >> _SIGN_BIT) & _ONE
        x = _uniform53(g) * _ZW[layer]
    return -x if neg else x


@kernel
def _normal_from_hash(h, h2, key, i):
    """N(0, 1) of entry i from its hash words: one lane of ``_ir_gauss8``, then the fix-up."""
    h = np.uint64(h)
    layer = np.int64(h & _LAYER)
    k = np.int64((np.uint64(h2) >> _ONE) | _ONE)
    if (h >> _SIGN_BIT) & _ONE:
        k = -k
    w = np.float64(k) * _ZTAB[2 * layer]
    if abs(w) < _ZTAB[2 * layer + 1]:
        return w
    return _ziggurat_slow(key, i, h, h2)


@kernel
def _column_keys(seed_key, j):
    """(key_j, key2_j) = (mix64(t), mix64(t ^ salt)), t = seed_key ^ mix64(j + G)."""
    t = seed_key ^ _mix64(np.uint64(j) + _GOLDEN)
    return _mix64(t), _mix64(t ^ _SECOND_SALT)


@kernel
def _project(dense, x, indices, start, stop, kind, seed_key, scale, M_T, psi, col, hbuf):
    """psi = M x, one column of M per non-zero, in increasing column order.

    Sparse (``dense`` False): the non-zeros indices[start:stop], x[start:stop].
    Dense: the scan of x[start:stop] (the whole row), zeros skipped and NaN
    kept. Each psi[i] receives ``xj * M_ij`` column after column, so every
    kind and input form gives the sum ``psi[i] += xj * col[i]`` bit for bit.

    Everything per column is inline (intrinsics, loops, and calls with scalar
    arguments only): a call passing arrays costs an NRT incref/decref pair
    (two atomic operations) per array, more than a hashed column itself.

    HASHED: the column's hash words, then ``_gauss8_add`` on 8 lanes at a
    time adds the accepted entries; the rejected ones (0.43%) are fixed up
    afterwards, their masks collected over up to 8 blocks in one 64-bit word
    so that the vector loop has no data-dependent branch. When 8 does not
    divide d (>= 8), the last block is the one ending at d, its lanes already
    added skipped.
    """
    d = psi.shape[0]
    half = hbuf.shape[0] // 2
    full = d // 8
    for i in range(d):
        psi[i] = 0.0
    for k in range(start, stop):
        xj = x[k]
        if dense:
            if xj == 0.0:
                continue
            j = k
        else:
            j = indices[k]
        if kind == STORED:
            for i in range(d):
                psi[i] += xj * M_T[j, i]
            continue
        if kind == RADEMACHER:
            key = _column_key(seed_key, j)
            for q in range((d + 63) // 64):
                h = _mix64(key + np.uint64(q + 1) * _GOLDEN)
                for b in range(min(64, d - 64 * q)):
                    bit = np.float64(np.int64((h >> np.uint64(b)) & _ONE))
                    col[64 * q + b] = (1.0 - 2.0 * bit) * scale
            for i in range(d):
                psi[i] += xj * col[i]
            continue
        key, key2 = _column_keys(seed_key, j)
        _hash_words(key, key2, hbuf)
        if d < 8:
            for i in range(d):
                col[i] = _normal_from_hash(hbuf[i], hbuf[half + i], key, i) * scale
                psi[i] += xj * col[i]
            continue
        pending = 0
        first = 0
        for b in range(full):
            pending |= _gauss8_add(8 * b, 0, hbuf, _ZTAB, scale, xj, psi) << (8 * (b & 7))
            if (b & 7) == 7:
                first = 8 * b - 56
                while pending:
                    i = first + trailing_zeros(pending)
                    pending &= pending - 1
                    col[i] = _ziggurat_slow(key, i, hbuf[i], hbuf[half + i]) * scale
                    psi[i] += xj * col[i]
        first = 8 * (full & ~7)
        if d > 8 * full:
            skip = 8 * full - (d - 8)
            tail = _gauss8_add(d - 8, skip, hbuf, _ZTAB, scale, xj, psi)
            pending |= (tail >> skip) << (8 * full - first)
        while pending:
            i = first + trailing_zeros(pending)
            pending &= pending - 1
            col[i] = _ziggurat_slow(key, i, hbuf[i], hbuf[half + i]) * scale
            psi[i] += xj * col[i]


@kernel
def _gaussian_column(seed_key, j, scale, col, hbuf):
    """col[i] = M_ij, i < d: N(0, 1/d) entries of column j (8 lanes at a time).

    When 8 does not divide d (>= 8) the last block is the one ending at d: it
    overlaps the one before and recomputes the same values there.
    """
    d = col.shape[0]
    half = hbuf.shape[0] // 2
    key, key2 = _column_keys(seed_key, j)
    _hash_words(key, key2, hbuf)
    if d < 8:
        for i in range(d):
            col[i] = _normal_from_hash(hbuf[i], hbuf[half + i], key, i) * scale
        return
    for b in range((d + 7) // 8):
        i0 = min(8 * b, d - 8)
        rejected = _gauss8_store(i0, hbuf, _ZTAB, scale, col)
        while rejected:
            i = i0 + trailing_zeros(rejected)
            rejected &= rejected - 1
            col[i] = _ziggurat_slow(key, i, hbuf[i], hbuf[half + i]) * scale


@kernel
def _rademacher_column(seed_key, j, scale, col):
    """col[i] = +-scale from bit (i mod 64) of hash i // 64 of column j."""
    d = col.shape[0]
    key = _column_key(seed_key, j)
    for q in range((d + 63) // 64):
        h = _mix64(key + np.uint64(q + 1) * _GOLDEN)
        stop = min(64, d - 64 * q)
        for b in range(stop):
            bit = np.float64(np.int64((h >> np.uint64(b)) & _ONE))
            col[64 * q + b] = (1.0 - 2.0 * bit) * scale


@kernel
def _project_sparse(indices, values, start, stop, kind, seed_key, scale, M_T, psi, col, hbuf):
    """psi = M x for the non-zeros indices[start:stop], values[start:stop], in order."""
    _project(False, values, indices, start, stop, kind, seed_key, scale, M_T, psi, col, hbuf)


@kernel
def _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf):
    """psi = M x for a dense row: O(D) scan, O(nnz d) work (NaN != 0 is kept)."""
    _project(True, x, _NO_INDICES, 0, x.shape[0], kind, seed_key, scale, M_T, psi, col, hbuf)


@kernel
def _column_into(j, kind, seed_key, scale, M_T, col, hbuf):
    """col = M[:, j]."""
    if kind == STORED:
        for i in range(col.shape[0]):
            col[i] = M_T[j, i]
    elif kind == HASHED:
        _gaussian_column(seed_key, j, scale, col, hbuf)
    else:
        _rademacher_column(seed_key, j, scale, col)


@kernel
def _fill_columns(columns, kind, seed_key, scale, M_T, out, hbuf):
    """out[k] = column columns[k] of M (materialisation for inspection/recover)."""
    for k in range(columns.shape[0]):
        _column_into(columns[k], kind, seed_key, scale, M_T, out[k], hbuf)


@kernel
def _correlate(r, kind, seed_key, scale, M_T, col, hbuf, corr, norms):
    """corr[j] = M[:, j]^T r and norms[j] = ||M[:, j]|| for every column j.

    One column at a time from the hash (OMP's M^T r without storing M).
    """
    d = r.shape[0]
    for j in range(corr.shape[0]):
        _column_into(j, kind, seed_key, scale, M_T, col, hbuf)
        acc = 0.0
        nrm = 0.0
        for i in range(d):
            acc += col[i] * r[i]
            nrm += col[i] * col[i]
        corr[j] = acc
        norms[j] = math.sqrt(nrm)


# ------------------------------------------------------------------ learning
# Every learning kernel projects and then calls DFOP's own kernels on psi
# (step, counters and prior refresh): the per-sample ``_dfop_learn_one`` for
# one row, the fused block kernel ``_dfop_learn_many`` for a chunk of rows
# projected into ``psi_block``. So a SparseDFOP step is by construction a DFOP
# step on M x. ``dfop_args`` below is
# (mu, w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip).
@kernel
def _sparse_learn_one_dense(
    x, y, mu, kind, seed_key, scale, M_T, psi, col, hbuf,
    w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip,
):
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)
    return _dfop_learn_one(psi, y, mu, w, P, Px, v, counts, forgotten, p0, period,
                           keep_prior, skip)


@kernel
def _sparse_learn_one_sparse(
    indices, values, y, mu, kind, seed_key, scale, M_T, psi, col, hbuf,
    w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip,
):
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)
    return _dfop_learn_one(psi, y, mu, w, P, Px, v, counts, forgotten, p0, period,
                           keep_prior, skip)


@kernel
def _sparse_learn_many_dense(
    X, Y, mu, mu_stride, kind, seed_key, scale, M_T, psi_block, col, hbuf,
    w, P, Px, work, v, counts, forgotten, p0, period, keep_prior, skip, out,
):
    """Learn a dense block; returns -1, or the first invalid row (``skip`` False).

    Chunks of ``psi_block.shape[0]`` rows are projected into ``psi_block`` and
    learnt by DFOP's fused block kernel (bit-identical to its per-row kernel).
    """
    n = X.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        for t in range(m):
            _project_dense(X[start + t], kind, seed_key, scale, M_T, psi_block[t], col, hbuf)
        bad = _dfop_learn_many(
            psi_block[:m], Y[start : start + m], mu[start * mu_stride :], mu_stride, w, P, Px,
            work, v, counts, forgotten, p0, period, keep_prior, skip, out[start : start + m],
        )
        if bad >= 0:
            return start + bad
    return -1


@kernel
def _sparse_learn_many_csr(
    indptr, indices, data, Y, mu, mu_stride, kind, seed_key, scale, M_T, psi_block, col, hbuf,
    w, P, Px, work, v, counts, forgotten, p0, period, keep_prior, skip, out,
):
    """Learn a CSR block; returns -1, or the first invalid row (``skip`` False).

    As ``_sparse_learn_many_dense``: chunks projected into ``psi_block``, then
    DFOP's fused block kernel.
    """
    n = Y.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        for t in range(m):
            r = start + t
            _project_sparse(indices, data, indptr[r], indptr[r + 1], kind, seed_key, scale, M_T,
                            psi_block[t], col, hbuf)
        bad = _dfop_learn_many(
            psi_block[:m], Y[start : start + m], mu[start * mu_stride :], mu_stride, w, P, Px,
            work, v, counts, forgotten, p0, period, keep_prior, skip, out[start : start + m],
        )
        if bad >= 0:
            return start + bad
    return -1


@kernel
def _sparse_predict_one_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf, w):
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)
    return _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_one_sparse(indices, values, kind, seed_key, scale, M_T, psi, col, hbuf, w):
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)
    return _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_many_dense(X, kind, seed_key, scale, M_T, psi, col, hbuf, w, out):
    for t in range(X.shape[0]):
        _project_dense(X[t], kind, seed_key, scale, M_T, psi, col, hbuf)
        out[t] = _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_many_csr(indptr, indices, data, kind, seed_key, scale, M_T, psi, col, hbuf,
                             w, out):
    for t in range(out.shape[0]):
        _project_sparse(indices, data, indptr[t], indptr[t + 1], kind, seed_key, scale, M_T,
                        psi, col, hbuf)
        out[t] = _dfop_predict_one(psi, w)


# ------------------------------------------------------------------ helpers
def _hash_buffer(d: int) -> np.ndarray:
    """The uint32 scratch of a column's two hash words, each padded to whole 8-lane blocks."""
    return np.zeros(16 * ((d + 7) // 8), dtype=np.uint32)


def _seed_key(seed: int) -> np.uint64:
    """mix64(seed) computed with Python integers (the kernels' first hash)."""
    z = seed & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return np.uint64(z ^ (z >> 31))


class _CSR(NamedTuple):
    """A validated CSR block as the kernels take it (int64 indices, model dtype)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    def __getitem__(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.indptr[t], self.indptr[t + 1]
        return (self.indices[a:b], self.data[a:b])


# --------------------------------------------------------------------- model
class SparseDFOP(DFOP):
    r"""DFOP on a random projection psi = M x of sparse inputs (SPEC.md section 2).

    Runs the forgetting-factor RLS of :class:`DFOP` on the compressed input
    psi_t = M x_t in R^d (M in R^{d x D}, entries N(0, 1/d) or +-1/sqrt(d)),
    predicting psi_t^T v. A step costs O(nnz(x) d + d^2) time and allocates
    nothing; the memory is O(d^2) whatever D is (except with the stored
    ``"gaussian"`` projection).

    It is a :class:`DFOP` in the compressed space (subclass): same
    ``forgetting``/``task``/``p0``/``keep_prior``/``on_invalid`` semantics and
    defaults, label coding, per-step ``forgetting`` in :meth:`learn_many`, and
    ``coef_`` = v (length d). What differs is the input: x in R^D.

    Parameters
    ----------
    n_features : int
        Input dimension D (may be 10^6 and more).
    n_components : int, default 100
        Compressed dimension d (``n_components <= n_features`` is not required).
    forgetting : float, default 0.01
        Forgetting factor mu in [0, 1) (lambda = 1 - mu), as in DFOP.
    task : {"regression", "classification"}
        As in DFOP (labels {-1, +1} or {0, 1}; prediction sign(psi^T v)).
    projection : {"hashed", "gaussian", "rademacher"}, default "hashed"
        How M is obtained (see the module notes): ``"hashed"`` N(0, 1/d) columns
        regenerated from a counter-based hash, nothing stored; ``"gaussian"``
        the same M stored as a (D, d) array in the state; ``"rademacher"``
        +-1/sqrt(d) from hash bits, nothing stored.
    seed : int, default 0
        Seed of M (a non-negative integer; same seed, same M on every machine).
    p0, keep_prior, dtype, on_invalid
        As in :class:`DFOP` (the prior refresh period is computed with d =
        ``n_components``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_components,)
        The compressed weights v.
    n_seen_, n_skipped_ : int

    Notes
    -----
    Inputs: one sample is a dense 1-D array of length D, or the non-zeros of a
    sparse row as a tuple ``(indices, values)`` (any order; duplicates add up),
    or a 1 x D ``scipy.sparse`` matrix; a block is a dense 2-D array or any
    ``scipy.sparse`` matrix (converted to CSR). Non-zeros are visited in
    increasing column index, so every input form gives bit-identical results.

    Memory (float64; the d-sized arrays halve for float32): ``hashed`` and
    ``rademacher``: 8 (d^2 + 38 d) + 40 + 64 ceil(d / 8) bytes (d = 100:
    111.3 KB, for any D; 32 d 8 of it is the chunk buffer of
    :meth:`learn_many`); ``gaussian``: that plus 8 D d bytes (D = 1000,
    d = 100: 0.91 MB; D = 10^6: 800 MB).

    Per-step cost of the projection: ``gaussian`` reads nnz columns; ``hashed``
    computes 2 d 32-bit hashes and d ziggurat draws per non-zero, 8 at a time;
    ``rademacher`` d/64 64-bit hashes per non-zero.

    The prediction kernels write psi into the work arrays: do not share one
    model between threads.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SparseDFOP
    >>> model = SparseDFOP(n_features=1_000_000, n_components=50, forgetting=0.002)
    >>> yhat = model.learn_one((np.array([3, 70_000]), np.array([1.0, 2.0])), 0.5)
    >>> model.nbytes()  # 8 (d^2 + 38 d) + 40 + 64 ceil(d / 8) bytes, d = 50
    35688
    """

    def __init__(
        self,
        n_features: int,
        n_components: int = 100,
        forgetting: float = 0.01,
        *,
        task: str = "regression",
        projection: str = "hashed",
        seed: int = 0,
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self.n_components = check_int("n_components", n_components)
        if projection not in _PROJECTIONS:
            raise ValueError(f"projection must be one of {_PROJECTIONS}, got {projection!r}")
        self.projection = projection
        self.seed = check_int("seed", seed, minimum=0)
        self._kind = {"gaussian": STORED, "hashed": HASHED, "rademacher": RADEMACHER}[projection]
        self._gen_kind = RADEMACHER if projection == "rademacher" else HASHED
        self._key = _seed_key(self.seed)
        self._scale = 1.0 / math.sqrt(self.n_components)
        self._M_cache: np.ndarray | None = None
        super().__init__(
            n_features, forgetting, task=task, p0=p0, keep_prior=keep_prior,
            dtype=dtype, on_invalid=on_invalid,
        )
        # DFOP's refresh period depends on the dimension of its input: d, not D.
        self._period = refresh_period(self.n_components, self.forgetting)

    # ------------------------------------------------------------ state
    def _allocate(self) -> SparseDFOPState:  # type: ignore[override]
        d, D, dt = self.n_components, self.n_features, self.dtype
        P = np.zeros((d, d), dtype=dt)
        P[np.diag_indices(d)] = self.p0
        if self._kind == STORED:
            if self._M_cache is None:
                # Generated once per model: reset() copies instead of re-hashing.
                M_T = np.empty((D, d), dtype=dt)
                _fill_columns(np.arange(D, dtype=np.int64), HASHED, self._key, self._scale,
                              np.zeros((0, d), dtype=dt), M_T, _hash_buffer(d))
                self._M_cache = M_T
            M_T = self._M_cache.copy()
        else:
            M_T = np.zeros((0, d), dtype=dt)
        return SparseDFOPState(
            w=np.zeros(d, dtype=dt),
            P=P,
            forgotten=np.zeros(1, dtype=np.float64),
            M_T=M_T,
            work_psi=np.zeros(d, dtype=dt),
            work_px=np.zeros(d, dtype=dt),
            work_v=np.zeros(d, dtype=dt),
            work_col=np.zeros(d, dtype=dt),
            counts=np.zeros(4, dtype=np.int64),
            work_next=np.zeros(d, dtype=dt),
            work_psi_block=np.zeros((BLOCK_ROWS, d), dtype=dt),
            work_hash=_hash_buffer(d),
        )

    def _bind_state(self) -> None:
        s = self._state
        self._w, self._P, self._M_T = s.w, s.P, s.M_T
        self._psi, self._Px, self._v, self._col = s.work_psi, s.work_px, s.work_v, s.work_col
        self._counts, self._forgotten = s.counts, s.forgotten
        self._work, self._psi_block, self._hbuf = s.work_next, s.work_psi_block, s.work_hash

    # ------------------------------------------------------------ inputs
    def _sparse_one(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """Validate one sparse row: (indices int64 sorted, values of the model dtype)."""
        if sp.issparse(x):
            if x.shape != (1, self.n_features):
                raise ValueError(
                    f"a sparse sample must have shape (1, {self.n_features}), got {x.shape}"
                )
            csr = self._check_X(x)
            return csr.indices, csr.data
        if len(x) != 2:
            raise ValueError("a sparse sample must be a tuple (indices, values)")
        idx = np.asarray(x[0])
        val = np.asarray(x[1])
        if idx.ndim != 1 or val.ndim != 1 or idx.shape != val.shape:
            raise ValueError(
                "a sparse sample (indices, values) needs two 1-D arrays of the same length, "
                f"got shapes {idx.shape} and {val.shape}"
            )
        if idx.size and idx.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
        if val.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(f"values must hold real numbers (bool, int or float); got {val.dtype}")
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        val = np.ascontiguousarray(val, dtype=self.dtype)
        if idx.size:
            lo, hi = idx.min(), idx.max()
            if lo < 0 or hi >= self.n_features:
                raise ValueError(
                    f"indices must be in [0, {self.n_features}), got values in [{lo}, {hi}]"
                )
            if np.any(idx[1:] < idx[:-1]):
                order = np.argsort(idx, kind="stable")
                idx, val = idx[order], val[order]
        return idx, val

    def _check_X(self, X: Any) -> np.ndarray | _CSR:  # type: ignore[override]
        if not sp.issparse(X):
            return as_matrix(X, self.n_features, self.dtype)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must be a 2-D matrix of shape (n_samples, {self.n_features}), "
                f"got shape {X.shape}"
            )
        if X.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(f"X must hold real numbers (bool, int or float); got dtype {X.dtype}")
        csr = X.tocsr()
        if csr is X:
            csr = X.copy()  # sorting below must not touch the caller's matrix
        indptr = np.asarray(csr.indptr, dtype=np.int64)
        indices = np.asarray(csr.indices, dtype=np.int64)
        n = csr.shape[0]
        if (
            indptr.shape != (n + 1,)
            or indptr[0] != 0
            or indptr[-1] > indices.shape[0]
            or np.any(np.diff(indptr) < 0)
        ):
            raise ValueError("X is not a valid CSR matrix (inconsistent indptr)")
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_features):
            raise ValueError(
                f"X has column indices outside [0, {self.n_features}): "
                f"[{indices.min()}, {indices.max()}]"
            )
        if not csr.has_sorted_indices:
            csr.sort_indices()
            indices = np.asarray(csr.indices, dtype=np.int64)
        return _CSR(
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(indices),
            np.ascontiguousarray(csr.data, dtype=self.dtype),
            (n, self.n_features),
        )

    def _invalid_message(self, x: Any, y: Any, where: str) -> str:  # type: ignore[override]
        if isinstance(x, tuple):  # (indices, values)
            idx, val = np.asarray(x[0]), np.asarray(x[1], dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(val))
            if bad.size:
                shown = ", ".join(f"x[{idx[k]}]={val[k]}" for k in bad[:5])
                return super()._invalid_message(np.array([np.nan]), y, where).replace(
                    "x[0]=nan", shown
                )
            return super()._invalid_message(np.zeros(1), y, where)
        return super()._invalid_message(x, y, where)

    # ------------------------------------------------------------ one-step
    def _kernel_args(self) -> tuple:
        """The projection's arguments, then the work arrays psi, col and the hash buffer."""
        return (self._kind, self._key, self._scale, self._M_T, self._psi, self._col, self._hbuf)

    def _dfop_args(self) -> tuple:
        """Arguments of DFOP's per-sample kernel after (x, y, mu)."""
        return (self._w, self._P, self._Px, self._v, self._counts, self._forgotten, self.p0,
                self._period, self.keep_prior, self._skip)

    def decision_function_one(self, x: Any) -> float:
        """Raw score psi^T v for one sample."""
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            return _sparse_predict_one_sparse(idx, val, *self._kernel_args(), self._w)
        return _sparse_predict_one_dense(self._row(x), *self._kernel_args(), self._w)

    def predict_one(self, x: Any) -> float:
        """Predict one sample: dense row, ``(indices, values)`` or a 1 x D sparse row."""
        score = self.decision_function_one(x)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def learn_one(self, x: Any, y: Any) -> float:
        """Predict x with the current model, then learn (x, y); return the prediction.

        ``x`` is a dense row of length D, the non-zeros ``(indices, values)``
        of a sparse row, or a 1 x D ``scipy.sparse`` matrix.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        yv = label_to_sign(y) if self._classify else (y if type(y) is float else as_scalar(y))
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            shown: Any = (idx, val)
            yhat, status = _sparse_learn_one_sparse(
                idx, val, yv, self.forgetting, *self._kernel_args(), *self._dfop_args(),
            )
        else:
            shown = xr = self._row(x)
            yhat, status = _sparse_learn_one_dense(
                xr, yv, self.forgetting, *self._kernel_args(), *self._dfop_args(),
            )
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(shown, y, "sample"))
        if self._classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    # ------------------------------------------------------------ block
    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        if forgetting is None:
            mu, stride = self._mu, 0
        else:
            mu = np.ascontiguousarray(forgetting, dtype=np.float64)
            if mu.shape != (X.shape[0],):
                raise ValueError(
                    f"forgetting must be a scalar or an array of shape ({X.shape[0]},), "
                    f"got shape {mu.shape}"
                )
            if not np.all((mu >= 0.0) & (mu < 1.0)):
                raise ValueError("every per-step forgetting factor must be in [0, 1)")
            stride = 1
        rest = (
            self._kind, self._key, self._scale, self._M_T, self._psi_block, self._col, self._hbuf,
            self._w, self._P, self._Px, self._work, self._v, self._counts, self._forgotten,
            self.p0, self._period, self.keep_prior, self._skip, out,
        )
        if isinstance(X, _CSR):
            return _sparse_learn_many_csr(X.indptr, X.indices, X.data, Y, mu, stride, *rest)
        return _sparse_learn_many_dense(X, Y, mu, stride, *rest)

    def learn_many(self, X: Any, y: Any, forgetting: Any = None) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features) or scipy.sparse matrix
            Sparse matrices are converted to CSR (indices checked, sorted on a
            copy when unsorted).
        y : array of shape (n,)
        forgetting : float or array of shape (n,), optional
            Per-step forgetting factors (G-DFOP), as in :meth:`DFOP.learn_many`.

        Raises
        ------
        ValueError
            At the first row with NaN/inf (``on_invalid="raise"``): the rows
            before it are learnt, it and the rows after it are not.
        """
        if forgetting is not None and np.ndim(forgetting) == 0:
            n = X.shape[0] if (sp.issparse(X) or np.ndim(X) == 2) else 0
            forgetting = np.full(n, float(forgetting))
        return self._finish(self._learn_many_checked(X, y, forgetting=forgetting))

    def _predict_block(self, X, out):  # type: ignore[override]
        rest = (*self._kernel_args(), self._w, out)
        if isinstance(X, _CSR):
            _sparse_predict_many_csr(X.indptr, X.indices, X.data, *rest)
        else:
            _sparse_predict_many_dense(X, *rest)

    # ------------------------------------------------------------ projection
    def projection_matrix(self, columns: Any = None) -> np.ndarray:
        """Materialise M (shape (d, D)) or the given columns of it (shape (d, k)).

        The values are exactly those the kernels use (in the model dtype).
        For D = 10^6 and d = 100 the whole of M takes 800 MB: ask for columns.
        """
        if columns is None:
            cols = np.arange(self.n_features, dtype=np.int64)
        else:
            cols = np.ascontiguousarray(columns, dtype=np.int64).reshape(-1)
            if cols.size and (cols.min() < 0 or cols.max() >= self.n_features):
                raise ValueError(f"columns must be in [0, {self.n_features})")
        out = np.empty((cols.shape[0], self.n_components), dtype=self.dtype)
        _fill_columns(cols, *self._kernel_args()[:4], out, self._hbuf)
        return out.T

    def recover(
        self, sparsity: int, method: str = "l1", *, coef: str = "lstsq", tol: float = 1e-10
    ) -> np.ndarray:
        """Estimate the uncompressed weights w in R^D from v (SPEC.md section 2, RECOVER).

        ``method="l1"``: basis pursuit ``min ||w||_1 s.t. M w = v`` as the linear
        program ``min 1^T (w+ + w-) s.t. [M, -M] [w+; w-] = v, w+- >= 0``
        (``scipy.optimize.linprog``, HiGHS), then the ``sparsity`` entries of
        largest magnitude are kept. ``method="omp"``: orthogonal matching
        pursuit, ``sparsity`` greedy steps picking the column with the largest
        normalised correlation |M_j^T r| / ||M_j|| (computed column by column
        from the hash, M never stored) and re-solving least squares on the
        chosen columns; it stops early when ||r|| <= tol ||v||.

        Both find the support S; ``coef`` says which values go on it:

        * ``"lstsq"`` (default): w_S = argmin ||M_S w_S - v|| (the SPEC's model
          v = M w; exact when v is the projection of an s-sparse w, and it
          removes the bias the truncation leaves).
        * ``"effective"``: w_S = (M^T v)_S, the weights the model really applies
          to those features (its prediction is psi^T v = (M^T v)^T x). Use it
          for a *learnt* v: the least-squares v of inputs living on S lies in
          span(M_S) with M_S^T v = w_S, so this is exact where "lstsq" is off
          by (M_S^T M_S)^{-1} (a relative error ~ sqrt(s / d)).
        * ``"raw"``: the LP's (or OMP's ``lstsq``) values, truncated.

        Returns
        -------
        ndarray of shape (n_features,), float64
            An s-sparse estimate of w.

        Notes
        -----
        The LP has 2D variables and d equality constraints and needs M
        materialised (8 d D bytes): use it up to D d ~ 10^7; OMP costs
        ``sparsity`` passes over the D columns.
        """
        s = check_int("sparsity", sparsity)
        v = self._w.astype(np.float64)
        D, d = self.n_features, self.n_components
        if coef not in ("lstsq", "effective", "raw"):
            raise ValueError(f"coef must be 'lstsq', 'effective' or 'raw', got {coef!r}")
        if method == "l1":
            if D * d > 20_000_000:
                raise ValueError(
                    f"the l1 linear program needs M materialised ({8 * D * d / 1e6:.0f} MB); "
                    "use method='omp' for this size"
                )
            from scipy.optimize import linprog

            M = self.projection_matrix().astype(np.float64)
            res = linprog(
                np.ones(2 * D), A_eq=np.hstack([M, -M]), b_eq=v, bounds=(0, None),
                method="highs",
            )
            if res.status != 0:
                raise RuntimeError(f"basis pursuit failed: {res.message}")
            w_full = res.x[:D] - res.x[D:]
            support = np.sort(np.argsort(-np.abs(w_full), kind="stable")[:s])
            raw = w_full[support]
        elif method == "omp":
            support, raw = self._omp(v, s, tol)
        else:
            raise ValueError(f"method must be 'l1' or 'omp', got {method!r}")
        w = np.zeros(D)
        Ms = self.projection_matrix(support).astype(np.float64)
        if coef == "lstsq":
            w[support] = np.linalg.lstsq(Ms, v, rcond=None)[0]
        elif coef == "effective":
            w[support] = Ms.T @ v
        elif coef == "raw":
            w[support] = raw
        else:
            raise ValueError(f"coef must be 'lstsq', 'effective' or 'raw', got {coef!r}")
        return w

    def _omp(self, v: np.ndarray, s: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
        D = self.n_features
        r = v.copy()
        corr = np.empty(D)
        norms = np.empty(D)
        col = np.empty(self.n_components)
        chosen: list[int] = []
        coef = np.zeros(0)
        vnorm = float(np.linalg.norm(v))
        # Column norms are fixed: computed with the first correlation pass.
        for _ in range(min(s, self.n_components)):
            if np.linalg.norm(r) <= tol * vnorm:
                break
            _correlate(r, *self._kernel_args()[:4], col, self._hbuf, corr, norms)
            score = np.abs(corr) / norms
            score[chosen] = -1.0
            chosen.append(int(np.argmax(score)))
            Ms = self.projection_matrix(chosen).astype(np.float64)
            coef = np.linalg.lstsq(Ms, v, rcond=None)[0]
            r = v - Ms @ coef
        order = np.argsort(chosen)
        return np.asarray(chosen, dtype=np.int64)[order], coef[order]

    # ------------------------------------------------------------ contracts
    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 12, "n_components": 5},
            {"n_features": 9, "n_components": 4, "forgetting": 0.05, "task": "classification",
             "projection": "gaussian"},
            {"n_features": 10, "n_components": 6, "projection": "rademacher", "seed": 3},
            {"n_features": 11, "n_components": 5, "dtype": "float32", "projection": "gaussian"},
        ]


# Kernels here call DFOP's: recompile them when dfop.py changes (see _jit).
recompile_with(globals(), _dfop_module)
