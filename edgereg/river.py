"""river estimators wrapping the edgereg models (``pip install edgereg[river]``).

Importing ``edgereg`` does not import river; this submodule does (import it as
``edgereg.river``). The estimators take river's dict inputs, so that
``river.evaluate.progressive_val_score`` and pipelines such as
``preprocessing.StandardScaler() | edgereg.river.DFOPRegressor()`` work::

    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> import edgereg.river
    >>> model = preprocessing.StandardScaler() | edgereg.river.DFOPRegressor(forgetting=0.01)
    >>> evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    MAE: 1.288232


Feature schema
--------------
The edgereg models have a fixed input dimension and fixed memory, so the
features are fixed by the **first sample learnt**: its keys, sorted (in the
dict's order when the keys cannot be sorted, e.g. mixed types), give
``n_features`` and the column order. Every later sample must have exactly
these keys, in any order: a missing key or a new key raises ``ValueError``
naming them (river's "emerging" / "disappearing" features are not supported:
fill or drop them upstream, e.g. with ``compose.Select`` or an imputer).
Before the first ``learn_one`` nothing is known: regressors predict 0.0 (what
the untrained model predicts for any input), classifiers ``None``,
multi-target regressors ``{}`` and the anomaly detector scores 0.0; the input
is not checked then.

Values are converted with ``float`` (bools and ints are fine). ``learn_one``
returns None, as river requires.

Classifiers
-----------
Binary: the two labels can be anything hashable (bool, str, ...). ``True``
and labels equal to 1 are learnt as +1, ``False`` and labels equal to 0 or -1
as -1; any other label takes the sign left free, the first such label getting
-1. ``classes_`` gives (label of -1, label of +1) once known. A third label
raises ``ValueError``. While only one label has been seen, ``predict_one``
returns it. ``predict_proba_one`` is not implemented (raises
``NotImplementedError``, river's convention): the models learn margins, not
probabilities, and a one-hot "probability" from the sign would be dishonest;
``decision_function_one`` gives the raw score (>= 0 predicts ``classes_[1]``).

The estimators pass ``river.checks.check_estimator`` except the checks listed
with their reason in :data:`UNIT_TEST_SKIPS` (their ``_unit_test_skips``).
"""

from __future__ import annotations

import inspect
import math
from typing import Any, ClassVar

import numpy as np
from river import base

import edgereg
from edgereg._adapters import build_parameters, model_parameters
from edgereg._validate import label_sign

__all__ = [
    "DFOPRegressor",
    "DFOPClassifier",
    "RLSRegressor",
    "SparseDFOPRegressor",
    "SparseDFOPClassifier",
    "NORMARegressor",
    "NORMAClassifier",
    "NORMANovelty",
    "MORESRegressor",
    "SOMORRegressor",
    "PARegressor",
    "PAMultiTargetRegressor",
    "SelectiveSamplerClassifier",
    "UNIT_TEST_SKIPS",
]

_SCHEMA = (
    "by design the feature set is fixed by the first sample learnt (fixed-size model, fixed "
    "memory): a sample with a new or a missing key raises ValueError"
)

_SCHEMA_CHECKS: dict[str, str] = {
    "check_emerging_features": _SCHEMA + " (this check learns samples with 3 keys dropped, "
    "then predicts full samples)",
    "check_disappearing_features": _SCHEMA + " (this check predicts samples with 3 keys dropped)",
    "check_radically_disappearing_features": _SCHEMA
    + " (this check keeps 1 key of each sample)",
}
_SOLAR = (
    "river runs it on Linnerud and on a one-hot encoded SolarFlare stream whose keys change "
    "from sample to sample (the encoder emits only the categories present), which a fixed "
    "feature set cannot take (ValueError by design); tests/test_river_adapters.py runs it "
    "on Linnerud"
)
_MULTI_TARGET_CHECKS: dict[str, str] = {
    name: _SOLAR
    for name in (
        "check_learn_one",
        "check_pickling",
        "check_shuffle_features_no_impact",
        "check_clone_is_independent",
        "check_bounded_memory_growth",
    )
}

#: Checks of ``river.checks`` each estimator skips (its ``_unit_test_skips``),
#: with the reason: {class name: {check name: reason}}. Filled at the end of
#: the module.
UNIT_TEST_SKIPS: dict[str, dict[str, str]] = {}


def _schema(x: dict) -> tuple:
    keys = tuple(x)
    try:
        return tuple(sorted(keys))
    except TypeError:  # keys of mixed types: keep the dict's order
        return keys


def _in_order(values: dict, keys: tuple, what: str, items: str, known: str) -> np.ndarray:
    """The values of ``keys``, in that order, as float64; a key missing or new is a ValueError."""
    try:
        ordered = [values[k] for k in keys]
    except KeyError:
        missing = [k for k in keys if k not in values]
        raise ValueError(f"{what} is missing {items} {missing}; {known}") from None
    if len(values) != len(keys):
        new = [k for k in values if k not in set(keys)]
        raise ValueError(f"{what} has new {items} {new}; {known}")
    try:
        return np.array(ordered, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} values must be real numbers: {exc}") from None


class _Adapter(base.Base):
    """Shared layer: the feature schema, the model built at the first learn_one."""

    #: Name of the wrapped class in ``edgereg``.
    _model_name: ClassVar[str]
    #: Model arguments fixed by the adapter (e.g. ``task``).
    _fixed: ClassVar[dict[str, Any]] = {}
    #: Model arguments the adapter takes from the data (``_adapters.model_parameters``).
    _inferred: ClassVar[tuple[str, ...]] = ("n_features", "n_outputs")

    def _init_adapter(self) -> None:
        self.model_: Any = None
        self.features_: tuple = ()

    def _model_params(self) -> dict[str, Any]:
        names = [
            n for n, p in inspect.signature(type(self).__init__).parameters.items()
            if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        return {n: getattr(self, n) for n in names}

    def _build(self, x: dict, **extra: Any) -> None:
        if not x:
            raise ValueError("the first sample learnt has no features")
        features = _schema(x)
        cls = getattr(edgereg, self._model_name)
        self.model_ = cls(
            n_features=len(features), **build_parameters(self._model_params()), **self._fixed,
            **extra
        )
        self.features_ = features

    def _row(self, x: dict) -> np.ndarray:
        known = (f"{type(self).__name__} was built on the features {list(self.features_)} "
                 "of the first sample learnt")
        return _in_order(x, self.features_, "sample", "feature(s)", known)

    @property
    def n_features_(self) -> int:
        """Number of features (0 before the first sample learnt)."""
        return len(self.features_)

    @property
    def _raw_memory_usage(self) -> int:
        """river's walk of the object graph, with compiled kernels counted as code.

        The same walk as ``river.base.Base._raw_memory_usage`` (gc referents,
        ndarray buffers), whose blacklist skips Python functions, classes and
        modules as code and interpreter state; here builtin functions too. A
        model keeps numba's compiled entry point of its one-sample kernel
        (``_jit.entry_point``), a builtin function whose referents lead into
        numba's compiler state, shared by every model: not this model's
        memory. Walking into it met a dead weak proxy there after kernels
        were compiled in the same process (ReferenceError in river's
        check_bounded_memory_growth, on a cold cache). Weak proxies are
        skipped by their type, which does not dereference them (``isinstance``
        on a dead one raises ReferenceError: seen once more on a cold cache
        after builtins were blacklisted): what a proxy points to is owned
        elsewhere.
        """
        import gc
        import sys
        import types
        import weakref

        blacklist = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)
        seen: set[int] = set()
        size = 0
        pending: list[Any] = [self]
        while pending:
            next_round: list[Any] = []
            for obj in pending:
                if type(obj) in weakref.ProxyTypes or id(obj) in seen:
                    continue
                if isinstance(obj, blacklist):
                    continue
                seen.add(id(obj))
                size += sys.getsizeof(obj)
                if isinstance(obj, np.ndarray):
                    size += obj.nbytes
                next_round.append(obj)
            pending = gc.get_referents(*next_round)
        return size

    def _unit_test_skips(self) -> set[str]:
        return set(UNIT_TEST_SKIPS[type(self).__name__])


# ------------------------------------------------------------------ regressors
class _Regressor(_Adapter, base.Regressor):
    def learn_one(self, x: dict, y: base.typing.RegTarget) -> None:
        if self.model_ is None:
            self._build(x)
        self.model_.learn_one(self._row(x), float(y))

    def predict_one(self, x: dict, with_interval: bool = False) -> Any:
        """The prediction; with ``with_interval``, river's ``conf.Interval(lower, upper)``
        of the model's calibrated interval (an adapter built with ``coverage``), as
        ``conf.RegressionJackknife.predict_one(x, with_interval=True)`` returns it."""
        if with_interval:
            from river.conf.interval import Interval

            if getattr(self, "coverage", None) is None:
                raise ValueError(f"{type(self).__name__} was built without intervals: "
                                 f"construct it with coverage=0.9 (for example)")
            if self.model_ is None:
                return Interval(lower=-math.inf, upper=math.inf)
            lower, _, upper = self.model_.predict_interval(self._row(x))
            return Interval(lower=lower, upper=upper)
        if self.model_ is None:
            return 0.0
        return float(self.model_.predict_one(self._row(x)))


@model_parameters
class DFOPRegressor(_Regressor):
    """:class:`edgereg.DFOP` regression (forgetting-factor RLS) for river.

    Parameters are those of :class:`edgereg.DFOP` except ``n_features``
    (from the first sample) and ``task``. ``model_`` is the DFOP once the
    first sample is learnt; ``features_`` the feature order.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> from edgereg.river import DFOPRegressor
    >>> model = preprocessing.StandardScaler() | DFOPRegressor(forgetting=0.01)
    >>> evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    MAE: 1.288232
    """

    _model_name = "DFOP"
    _fixed = {"task": "regression"}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"forgetting": 0.05, "p0": 10.0}
        yield {"forgetting": 0.05, "coverage": 0.9}


@model_parameters
class RLSRegressor(_Regressor):
    """:class:`edgereg.RLS` (recursive least squares, no forgetting) for river."""

    _model_name = "RLS"
    _fixed = {"task": "regression"}


@model_parameters
class SparseDFOPRegressor(_Regressor):
    """:class:`edgereg.SparseDFOP` regression (DFOP on a random projection) for river."""

    _model_name = "SparseDFOP"
    _fixed = {"task": "regression"}

    @classmethod
    def _unit_test_params(cls):
        yield {"n_components": 4}
        yield {"n_components": 3, "projection": "rademacher", "forgetting": 0.05}


@model_parameters
class NORMARegressor(_Regressor):
    """:class:`edgereg.NORMARegressor` (budgeted kernel regression) for river."""

    _model_name = "NORMARegressor"

    @classmethod
    def _unit_test_params(cls):
        yield {"budget": 16}
        yield {"budget": 16, "loss": "epsilon", "nu": 0.3, "kernel": "laplacian"}


@model_parameters
class PARegressor(_Regressor):
    """:class:`edgereg.PARegressor` (passive-aggressive PA-I / PA-II), single output, for river.

    For several outputs use :class:`PAMultiTargetRegressor`.
    """

    _model_name = "PARegressor"


# ----------------------------------------------------------------- classifiers
class _Classifier(_Adapter, base.Classifier):
    def _init_adapter(self) -> None:
        super()._init_adapter()
        self._labels: dict[Any, float] = {}  # label -> sign
        self._by_sign: dict[float, Any] = {}  # sign -> label

    @property
    def classes_(self) -> tuple:
        """(label learnt as -1, label learnt as +1); None for a sign not seen yet."""
        return (self._by_sign.get(-1.0), self._by_sign.get(1.0))

    def _sign(self, y: Any) -> float:
        s = self._labels.get(y)
        if s is not None:
            return s
        if len(self._labels) == 2:
            raise ValueError(
                f"{type(self).__name__} is a binary classifier: label {y!r} is a third class "
                f"(classes_ = {self.classes_})"
            )
        try:  # a label of edgereg's policy keeps its sign (True is 1)
            preferred: float | None = label_sign(y)
        except (TypeError, ValueError):  # not a number: a str, a tuple...
            preferred = None
        if preferred is None or preferred != preferred or preferred in self._by_sign:
            preferred = 1.0 if -1.0 in self._by_sign else -1.0
        self._labels[y] = preferred
        self._by_sign[preferred] = y
        return preferred

    def learn_one(self, x: dict, y: base.typing.ClfTarget) -> None:
        if self.model_ is None:
            self._build(x)
        self.model_.learn_one(self._row(x), self._sign(y))

    def decision_function_one(self, x: dict) -> float:
        """Raw score (>= 0 predicts ``classes_[1]``); 0.0 before the first sample learnt."""
        if self.model_ is None:
            return 0.0
        return float(self.model_.decision_function_one(self._row(x)))

    def predict_one(self, x: dict, **kwargs: Any) -> base.typing.ClfTarget | None:
        if self.model_ is None:
            return None
        s = self.model_.predict_one(self._row(x))
        label = self._by_sign.get(s)
        if label is None:  # only one label seen so far: it is the only answer
            return next(iter(self._labels), None)
        return label


@model_parameters
class DFOPClassifier(_Classifier):
    """:class:`edgereg.DFOP` binary classification (least squares on +-1 with forgetting) for river.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> from edgereg.river import DFOPClassifier
    >>> model = preprocessing.StandardScaler() | DFOPClassifier(forgetting=0.01)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 88.07%
    """

    _model_name = "DFOP"
    _fixed = {"task": "classification"}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"forgetting": 0.05, "dtype": "float32"}


@model_parameters
class SparseDFOPClassifier(_Classifier):
    """:class:`edgereg.SparseDFOP` binary classification for river."""

    _model_name = "SparseDFOP"
    _fixed = {"task": "classification"}

    @classmethod
    def _unit_test_params(cls):
        yield {"n_components": 5}


@model_parameters
class NORMAClassifier(_Classifier):
    """:class:`edgereg.NORMAClassifier` (budgeted kernel hinge loss) for river."""

    _model_name = "NORMAClassifier"

    @classmethod
    def _unit_test_params(cls):
        yield {"budget": 16}
        yield {"budget": 16, "nu": 0.3, "kernel": "laplacian"}


@model_parameters
class SelectiveSamplerClassifier(_Classifier):
    """:class:`edgereg.SelectiveSampler` (BBQ with switch detection) for river.

    ``learn_one`` gives the label of every sample (river's protocol); the
    model learns those its BBQ rule queries. ``decision_function_one`` is
    w^T x (same sign as the model's score).
    """

    _model_name = "SelectiveSampler"

    def decision_function_one(self, x: dict) -> float:
        if self.model_ is None:
            return 0.0
        return float(self._row(x) @ self.model_.coef_.astype(np.float64))

    @classmethod
    def _unit_test_params(cls):
        yield {"window0": 5, "window_max": 40}


# ---------------------------------------------------------------- multi-target
class _MultiTarget(_Adapter, base.MultiTargetRegressor):
    def _init_adapter(self) -> None:
        super()._init_adapter()
        self.targets_: tuple = ()

    def _target(self, y: dict) -> np.ndarray:
        known = f"the outputs are {list(self.targets_)}"
        return _in_order(y, self.targets_, "target", "output(s)", known)

    def learn_one(self, x: dict, y: dict) -> None:
        if self.model_ is None:
            if not y:
                raise ValueError("the first target learnt has no outputs")
            targets = _schema(y)
            self._build(x, n_outputs=len(targets))
            self.targets_ = targets
        self.model_.learn_one(self._row(x), self._target(y))

    def predict_one(self, x: dict, with_interval: bool = False) -> dict:
        """The prediction of each output; with ``with_interval``, each output's
        ``conf.Interval(lower, upper)`` of the model's calibrated interval (an adapter
        built with ``coverage``: MORES), as the single-output adapters give one."""
        if with_interval:
            from river.conf.interval import Interval

            if getattr(self, "coverage", None) is None:
                raise ValueError(f"{type(self).__name__} was built without intervals: "
                                 f"construct it with coverage=0.9 (for example)")
            if self.model_ is None:
                return {}
            bands = self.model_.predict_interval(self._row(x))
            return {k: Interval(lower=float(b[0]), upper=float(b[2]))
                    for k, b in zip(self.targets_, bands, strict=True)}
        if self.model_ is None:
            return {}
        out = self.model_.predict_one(self._row(x))
        return {k: float(v) for k, v in zip(self.targets_, out, strict=True)}


@model_parameters
class MORESRegressor(_MultiTarget):
    """:class:`edgereg.MORES` (dynamic-structure multi-output regression) for river.

    Outputs are the keys of the first target dict learnt (sorted), like the
    features; ``predict_one`` returns a dict with these keys.
    """

    _model_name = "MORES"


@model_parameters
class SOMORRegressor(_MultiTarget):
    """:class:`edgereg.SOMOR` (simple online multi-output regression) for river."""

    _model_name = "SOMOR"


@model_parameters
class PAMultiTargetRegressor(_MultiTarget):
    """:class:`edgereg.PARegressor` with several outputs (PA-I / PA-II per output) for river."""

    _model_name = "PARegressor"


# ------------------------------------------------------------------- anomaly
@model_parameters
class NORMANovelty(_Adapter, base.AnomalyDetector):
    """:class:`edgereg.NORMANovelty` as a river anomaly detector.

    ``score_one(x)`` is rho - f(x): higher is more anomalous, > 0 means the
    model flags x as novel (about a fraction ``nu`` of a stationary stream).
    ``learn_one(x)`` learns x (no target).
    """

    _model_name = "NORMANovelty"

    def learn_one(self, x: dict) -> None:
        if self.model_ is None:
            self._build(x)
        self.model_.learn_one(self._row(x))

    def score_one(self, x: dict) -> float:
        if self.model_ is None:
            return 0.0
        return -float(self.model_.score_one(self._row(x)))

    @classmethod
    def _unit_test_params(cls):
        yield {"budget": 32}
        yield {"budget": 32, "nu": 0.3, "kernel": "laplacian", "gamma": 0.1}


_ALL = (
    DFOPRegressor, DFOPClassifier, RLSRegressor, SparseDFOPRegressor, SparseDFOPClassifier,
    NORMARegressor, NORMAClassifier, NORMANovelty, MORESRegressor, SOMORRegressor, PARegressor,
    PAMultiTargetRegressor, SelectiveSamplerClassifier,
)
for _cls in _ALL:
    UNIT_TEST_SKIPS[_cls.__name__] = dict(_SCHEMA_CHECKS)
    if issubclass(_cls, _MultiTarget):
        UNIT_TEST_SKIPS[_cls.__name__].update(_MULTI_TARGET_CHECKS)
