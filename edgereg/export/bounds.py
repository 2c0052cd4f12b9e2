"""The range of every integer of a model's learnt state, as its own load accepts it.

``edgereg.native`` loads state files with numpy alone, into C code that trusts
its integers: a counter is a loop bound, the next refresh coordinate a row of
P, a bank's window an index into its lattice. A value out of range there is
a read or write outside the caller's struct. The models state those
invariants once, in their ``_state_faults`` (what ``edgereg.load`` refuses);
the export asks that function for each integer element's range and writes the
ranges in the layout file, so the runtime without numba checks the same
bounds without a second copy of them.

The search assumes what every fault check of an integer is: an interval of
accepted values, found from a fresh (accepted) state by bisection up to
``LIMIT`` and down to ``-LIMIT``, one element moved at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The bisection's ends: beyond any count a kernel can reach (2^62).
LIMIT = 2**62


def _accepts(model: Any, state: Any, field: int, flat: int, value: int) -> bool:
    arrays = [np.array(a, copy=True) for a in state]
    arrays[field].reshape(-1)[flat] = value
    return not model._state_faults(type(state)(*arrays))


def _edge(model: Any, state: Any, field: int, flat: int, good: int, far: int) -> int:
    """The accepted value furthest from ``good`` towards ``far`` (``far`` itself
    when accepted), by bisection on [good, far]."""
    if _accepts(model, state, field, flat, far):
        return far
    while abs(far - good) > 1:
        mid = (good + far) // 2
        if _accepts(model, state, field, flat, mid):
            good = mid
        else:
            far = mid
    return good


def integer_bounds(model: Any) -> list[list[Any]]:
    """[field, flat index, low, high] for every integer element of the learnt
    state whose accepted range is narrower than [-LIMIT, LIMIT]."""
    state = model._state
    out = []
    for i, name in enumerate(state._fields):
        a = np.asarray(state[i])
        if a.dtype.kind not in "iu":
            continue
        for j in range(a.size):
            now = int(a.reshape(-1)[j])
            if not _accepts(model, state, i, j, now):  # a fresh state is always accepted
                raise RuntimeError(f"{type(model).__name__}: its fresh {name}[{j}] = {now} "
                                   "is refused by its own load")
            low = _edge(model, state, i, j, now, -LIMIT)
            high = _edge(model, state, i, j, now, LIMIT)
            if (low, high) != (-LIMIT, LIMIT):
                out.append([name, j, low, high])
    return _unpinned(model, state, out)


#: Integers of at most this many accepted values are tried for derived work.
TABULATED = 256


def derived_work(model: Any, bounds: list[list[Any]]) -> list[list[Any]]:
    """What the model's own load derives from a learnt integer, tabulated.

    A bank's members' forgetting factors and refresh periods are work, not
    learnt state: ``edgereg.load`` sets them from the saved window. For every
    learnt integer element of a small accepted range (``bounds``, at most
    ``TABULATED`` values), each value is loaded into a fresh model by the
    class's own ``_copy_state_in``; the struct's work bytes that change with it
    are written out per value, so that ``edgereg.native`` sets them as the
    class does. [field, flat index, low, [[byte offset, count] ...], [hex of
    those bytes per value from low]]; none for a model whose load derives
    nothing."""
    from .families import family_of
    from .header import image, layout

    out = []
    for name, flat, low, high in bounds:
        if high - low + 1 > TABULATED:
            continue
        images = []
        for value in range(low, high + 1):
            m = type(model)(**model.get_params())
            arrays = {k: np.array(v, copy=True) for k, v in m._state._asdict().items()}
            arrays[name].reshape(-1)[flat] = value
            m._copy_state_in(arrays, source="export")
            family = family_of(m)
            images.append(np.frombuffer(image(family, family.current), dtype=np.uint8))
        family = family_of(model)
        learnt = np.zeros(images[0].size, dtype=bool)  # the learnt fields' bytes
        offsets = dict(layout(family)[0])
        sizes = {b.name: b.dtype.itemsize for b in family.blocks}
        for f in family.fields:
            if f.learnt:
                for first, count in f.runs():
                    at = offsets[f.block] + first * sizes[f.block]
                    learnt[at: at + count * sizes[f.block]] = True
        varies = np.zeros_like(learnt)
        for im in images[1:]:
            varies |= im != images[0]
        varies &= ~learnt
        # Whole 8-byte slots (an element of a float64 or int64 block, two of a
        # float32 one), not the bytes that happened to differ.
        varies = np.repeat(varies.reshape(-1, 8).any(axis=1), 8) & ~learnt
        if not varies.any():
            continue
        edges = np.flatnonzero(np.diff(np.concatenate([[0], varies.astype(np.int8), [0]])))
        ranges = [[int(a), int(b - a)] for a, b in zip(edges[::2], edges[1::2], strict=True)]
        out.append([name, flat, low, ranges,
                    [b"".join(im[a: a + n].tobytes() for a, n in ranges).hex()
                     for im in images]])
    return out


def _unpinned(model: Any, state: Any, found: list[list[Any]]) -> list[list[Any]]:
    """Widen the range of an element that the state as it is pins to one value
    through another element (DriftAlarm's alarm count, at most its count of rows
    tested: 0..0 in a fresh state): searched again with every other bounded
    integer at its high end, when the model accepts that state."""
    pinned = [b for b in found if b[2] == b[3]]
    if not pinned:
        return found
    arrays = [np.array(a, copy=True) for a in state]
    names = list(state._fields)
    for name, j, _, high in found:
        arrays[names.index(name)].reshape(-1)[j] = high
    for b in pinned:
        arrays[names.index(b[0])].reshape(-1)[b[1]] = b[2]
    high_state = type(state)(*arrays)
    if model._state_faults(high_state):
        return found
    for b in pinned:
        i, now = names.index(b[0]), b[2]
        b[2] = min(now, _edge(model, high_state, i, b[1], now, -LIMIT))
        b[3] = max(now, _edge(model, high_state, i, b[1], now, LIMIT))
    return found
