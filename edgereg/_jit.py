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
