"""The one numba decorator every edgereg kernel uses.

``cache=True``: compiled code is written to disk and reloaded by later
processes (cold start on a device). ``nogil=True``: kernels release the GIL so
a gateway can run several models from threads. ``error_model="numpy"``: a
division by zero yields inf/nan (which the kernels detect and report) instead
of raising ``ZeroDivisionError`` from inside a loop. No ``fastmath``: it would
let LLVM assume NaNs never occur (sensor data has them) and reassociate the
covariance update, which breaks its exact symmetry.
"""

from numba import njit

kernel = njit(cache=True, nogil=True, error_model="numpy")


def entry_point(dispatcher, args):
    """The compiled entry point of ``dispatcher`` for exactly the types of ``args``.

    Calling it skips numba's per-call type resolution (about 180 ns of the
    ~0.8 us a one-sample call costs). Only for hot paths whose caller has
    already guaranteed the argument types (dtype, ndim, C-contiguity): the
    entry point does not check them. Falls back to the dispatcher if numba's
    internals differ (``overloads`` and ``entry_point`` are not public API).
    """
    try:
        types = tuple(dispatcher.typeof_pyval(a) for a in args)
        return dispatcher.overloads[types].entry_point
    except Exception:  # pragma: no cover - depends on numba internals
        return dispatcher
