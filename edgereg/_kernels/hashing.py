"""The hashed random projection's generator: column j of M from (seed, j), nothing stored.

docs/algorithms/sparse_dfop.md (Sparse-DFOP). Column keys come from splitmix64
(``_mix64``) of the seed and j; entry i of column j from two 32-bit words of
Wellons' lowbias32 driving Marsaglia and Tsang's 1024-layer ziggurat (tables
in 40-digit decimal arithmetic at import), 8 entries at a time in
target-independent LLVM IR (``_hash_words``, ``_gauss8_*``: LLVM does not
vectorise them from Python loops), with plain NumPy twins for
``NUMBA_DISABLE_JIT=1``. Every entry is a pure function of (seed, j, i), the
same bits on every machine. The argument and the figures:
docs/design/sparse_dfop.md.
"""

from __future__ import annotations

import decimal
import math
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core import config as numba_config
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from .._jit import kernel

_MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_FALLBACK_SALT = np.uint64(0xD1B54A32D192ED03)
_SECOND_SALT = np.uint64(0x8CB92BA72F3D8DD7)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
# Shift counts as uint64, so that shifts of uint64 words stay uint64 in numba.
_S11, _S27, _S30, _S31, _S32 = (np.uint64(s) for s in (11, 27, 30, 31, 32))
_LOW32 = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)

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
