"""What the scikit-learn and river adapters share: their parameters are the model's.

An adapter wraps one edgereg class (``_model_name``) and takes its
hyper-parameters, minus what the adapter infers from the data (``_inferred``:
``n_features``, and ``n_outputs`` for the multi-output models) or fixes itself
(``_fixed``, e.g. ``task``). Both libraries read an estimator's parameters
back by introspecting ``__init__`` and expect it to store each one as an
attribute of that name and do nothing else; :func:`model_parameters` writes
that ``__init__`` from the wrapped class's own signature, so the adapters'
names, defaults and order cannot drift from the models' (a parameter added
to a model reaches both adapters).
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from ._base import model_class

T = TypeVar("T", bound=type)


def adapter_signature(cls: type) -> inspect.Signature:
    """``__init__``'s signature for an adapter: the model's, without what it infers or fixes."""
    model = model_class(cls._model_name)  # type: ignore[attr-defined]
    skip = {*cls._inferred, *cls._fixed}  # type: ignore[attr-defined]
    params = [p for name, p in inspect.signature(model.__init__).parameters.items()
              if name not in skip]
    return inspect.Signature(params)


def model_parameters(cls: T) -> T:
    """Class decorator: give the adapter ``cls`` an ``__init__`` taking its model's parameters.

    The ``__init__`` binds its arguments to :func:`adapter_signature` (so a
    wrong name or a missing required argument is Python's usual
    ``TypeError``), stores each parameter as an attribute, then runs the
    adapter's ``_init_adapter`` when it has one (river's adapters: the model
    is built at the first sample). ``__signature__`` is that signature, for
    ``inspect``, scikit-learn's ``get_params`` and river's ``_get_params``.
    """
    signature = adapter_signature(cls)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            setattr(self, name, value)
        init_adapter = getattr(self, "_init_adapter", None)
        if init_adapter is not None:
            init_adapter()

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__doc__ = f"Parameters: those of :class:`edgereg.{cls._model_name}` (see the class)."  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]
    return cls


def build_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """An adapter's parameters as the model's constructor takes them: DFOP's
    ``arithmetic`` left out at its default, since ``forgetting="auto"`` makes a
    bank, which has no such parameter."""
    if params.get("arithmetic") == "auto":
        params = {k: v for k, v in params.items() if k != "arithmetic"}
    return params
