"""The one numba decorator every edgereg kernel uses (``compiled``, and ``kernel``).

Cached: compiled code is written to disk and reloaded by later processes
(cold start on a device), by edgereg's cache policy (``_cache``: outside the
installed package, every file checked, a damaged entry rebuilt).
``nogil=True``: kernels release the GIL so a gateway can run several models
from threads. ``error_model="numpy"``: a division by zero yields inf/nan
(which the kernels detect and report) instead of raising
``ZeroDivisionError`` from inside a loop. No ``fastmath``: it would
let LLVM assume NaNs never occur (sensor data has them) and reassociate the
covariance update, which breaks its exact symmetry.
"""

from typing import Any

from numba import njit

from ._cache import depend_on_sources, enable_cache


def compiled(**options):
    """``njit`` with edgereg's options and cache; ``options`` add to or override them.

    ``compiled()`` is :data:`kernel`; ``compiled(parallel=True)`` (Fleet) and
    ``compiled(inline="always")`` (SelectiveSampler's per-round helpers) are
    the other two forms in use.
    """
    options = {"nogil": True, "error_model": "numpy", **options}

    def decorate(function):
        dispatcher = njit(**options)(function)
        enable_cache(dispatcher)  # what cache=True does, with edgereg's locator
        return dispatcher

    return decorate


def python_function(function):
    """The plain Python function of a kernel (itself with ``NUMBA_DISABLE_JIT=1``).

    For the layout helpers the classes share with their kernels: called from
    Python they make NumPy views whose ``base`` is the block.
    """
    return getattr(function, "py_func", function)


#: The decorator of every kernel (see the module docstring).
kernel = compiled()

#: ``kernel``, inlined into its callers: the per-step helpers whose call
#: costs more than their work at small d (arrays are passed as exploded
#: structs). Caching works as for ``kernel``; a caller is recompiled when the
#: inlined function changes only if both live in one file, so keep an inlined
#: helper in the module of its callers.
inline_kernel = compiled(inline="always")


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


class FirstCall:
    """A model's hot kernel before its first call: called as the kernel, it goes
    through numba's dispatcher (which compiles or loads the kernel), then sets
    the model's attribute ``name`` to the compiled entry point for exactly
    those argument types (:func:`entry_point`), so that every later call
    skips the dispatcher and the caller tests nothing per call.

    For callers that guarantee the argument types on every call (DFOP's
    learn_one). The model is held by a weak reference: a model holding a
    bound method of itself would sit in a reference cycle, freed only by the
    cyclic collector (and a method of the class shadowed by an instance
    attribute makes CPython's attribute lookup ~100 ns slower, measured).
    """

    __slots__ = ("dispatcher", "model", "name")

    def __init__(self, dispatcher: Any, model: Any, name: str) -> None:
        import weakref

        self.dispatcher = dispatcher
        self.model = weakref.ref(model)
        self.name = name

    def __call__(self, *args: Any) -> Any:
        result = self.dispatcher(*args)
        model = self.model()
        if model is not None:
            setattr(model, self.name, entry_point(self.dispatcher, args))
        return result


def recompile_with(module_globals, *dependencies):
    """Make the cached kernels of a module also depend on other modules' source.

    numba stamps a kernel's on-disk cache with its own file's modification time
    and size only: a kernel calling into (or inlining) another edgereg module
    would keep loading stale machine code after that module changed (a
    reinstall touches every file, an edit in a checkout does not; measured in
    docs/design/caching.md). The sha256 of each dependency's source, taken
    transitively, becomes part of the stamp of every cached dispatcher defined
    in ``module_globals`` (``_cache.depend_on_sources``: edgereg's own index
    file, no numba attribute written), so they recompile when any of those
    files changes. Call it at the end of every kernel module that imports
    another kernel module (tests/test_cache.py checks that each does).
    """
    import hashlib

    from numba.core.registry import CPUDispatcher

    # Transitively: a dependency's own dependencies (recorded below when it
    # was imported, before this module) count too, so that editing
    # _kernels/guards.py recompiles the fleet kernels that reach it through
    # _kernels/dfop.py.
    seen: list[Any] = []

    def visit(module: Any) -> None:
        if module in seen:
            return
        seen.append(module)
        for inner in getattr(module, "_KERNEL_DEPENDENCIES", ()):
            visit(inner)

    for module in dependencies:
        visit(module)
    module_globals["_KERNEL_DEPENDENCIES"] = tuple(seen)
    digest = hashlib.sha256()
    for module in seen:
        with open(module.__file__, "rb") as fh:
            digest.update(fh.read())
    extra = digest.digest()
    name = module_globals["__name__"]
    for value in list(module_globals.values()):
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
            depend_on_sources(value, extra)
