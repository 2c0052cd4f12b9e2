"""FleetBank: a Fleet of DFOPBanks, ``Fleet(n_models, n_features, forgetting="auto")``.

Model k is a DFOPBank (``bank.py``) whose blocks are row k of the fleet's;
the fleet's kernels (``_kernels/fleet.py``) run the models in parallel, each
as a DFOPBank's kernel runs it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, block_at
from ._jit import python_function
from ._kernels.bank import member_index
from ._kernels.fleet import (
    _fleet_bank_learn_many,
    _fleet_bank_learn_one,
    _fleet_bank_predict_many,
    _fleet_bank_predict_one,
)
from ._validate import check_dtype, check_int, check_on_invalid
from .bank import (
    DFOPBankState,
    _allocate_banks,
    _check_auto,
    _file_params,
    _init_bank_parameters,
    _padded,
    _with_window,
    bank_faults,
    place_members,
)
from .dfop import DFOP, init_dfop_parameters
from .fleet import Fleet

__all__ = ["FleetBank"]


class FleetBankWork(NamedTuple):
    """A FleetBank's workspace: its banks' (``DFOPBankWork``, stacked) and the models' status."""

    scratch: np.ndarray
    member_hyper: np.ndarray
    member_codes: np.ndarray
    hyper: np.ndarray
    codes: np.ndarray
    predictions: np.ndarray
    chunk: np.ndarray
    block: np.ndarray
    status: np.ndarray  # int64 (n_models,): each model's status of the last call (Fleet's)


class FleetBank(Fleet):
    """A Fleet of DFOPBanks: ``Fleet(n_models, n_features, forgetting="auto")``.

    Model k is a :class:`DFOPBank` (bit for bit: ``model(k)`` continues it
    exactly) that learns its own drift rate; the models run in parallel as
    a Fleet's do (``prange``). Parameters: a Fleet's, plus the bank's
    ``forgetting_grid``, ``members``, ``scout``, ``learning_rate`` and
    ``share`` (as for :class:`DFOPBank`: by default a window of 4 and a
    scout, K = 5 members). Attributes, per model: ``forgetting_``
    (n_models,), ``member_forgetting_`` and ``forgetting_weights_``
    (n_models, K), ``coef_`` (n_models, n_features) and ``member_coef_``
    (n_models, K, n_features).

    Memory: n_models times a DFOPBank's (``nbytes()``), plus 8 bytes a model.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import Fleet
    >>> fleet = Fleet(3, 2, forgetting="auto")          # 3 models, a bank each
    >>> type(fleet).__name__
    'FleetBank'
    >>> X = np.random.default_rng(0).normal(size=(3, 200, 2))
    >>> fleet.learn_many(X, X @ [1.0, 2.0]).shape      # prequential, model by model
    (3, 200)
    """

    def __init__(
        self,
        n_models: int,
        n_features: int,
        forgetting: str = "auto",
        *,
        task: str = "regression",
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        forgetting_grid: Any = None,
        members: Any = None,
        learning_rate: float = 2.0,
        share: float = 1e-3,
        scout: Any = None,
    ) -> None:
        _check_auto(forgetting, "FleetBank")
        self.n_models = check_int("n_models", n_models)
        self.n_features = check_int("n_features", n_features)
        self.dtype = check_dtype(dtype)
        self.on_invalid = check_on_invalid(on_invalid)
        self._skip = self.on_invalid == "skip"
        init_dfop_parameters(self, self.n_features, 0.0, task, p0, keep_prior)
        _init_bank_parameters(self, forgetting_grid, members, learning_rate, share, scout)
        self.reset()

    @classmethod
    def _file_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        return _file_params(params)

    def _copy_state_in(self, arrays: dict[str, np.ndarray], source: str) -> None:
        arrays = _with_window(arrays, self._K, self._lattice, self.n_models)
        super()._copy_state_in(arrays, source)
        place_members(self._state, self._work, self._lattice, self.n_features)

    def set_model(self, k: int, model: DFOP) -> None:
        """Copy a DFOPBank's state (its window too) into slot k (``Fleet.set_model``)."""
        super().set_model(k, model)
        place_members(self._state, self._work, self._lattice, self.n_features)

    def _allocate(self) -> tuple[DFOPBankState, FleetBankWork]:  # type: ignore[override]
        state, work = _allocate_banks(
            self.n_models, self.n_features, self._lattice, self._K, self.p0, self.dtype,
            self.keep_prior, self._classify, self._skip, self.learning_rate, self.share,
            self._scout,
        )
        return state, FleetBankWork(*work, status=np.zeros(self.n_models, dtype=np.int64))

    def _bind_state(self) -> None:
        s = self._state
        F, K, d = s.w.shape
        self._PW = block_at(s.P, (F, K, d + 1, d))
        # The rows with their padding: a C-contiguous A, so that A[k] in the
        # fleet's kernels has DFOPBank's array types and every bank and DFOP
        # kernel below is compiled once for both (not once more for the
        # strided rows: FleetBank's first call compiled for 24 s instead of 9).
        rows = self._work.block
        self._A = block_at(rows, (F, _padded(rows.shape[1])))

    def nbytes(self) -> int:
        """Bytes of the banks' two blocks and the status (A's rows without their padding)."""
        return int(self._PW.nbytes + self._work.block.nbytes + self._work.status.nbytes)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:  # type: ignore[override]
        faults = OnlineModel._state_faults(self, state)
        for k in range(self.n_models):
            one = DFOPBankState(*(field[k] for field in state))
            for field, reason in bank_faults(one, self._lattice, self.n_features, self._scout):
                faults.append((field, f"of model {k}: {reason}"))
        return faults

    # ---------------------------------------------------------------- kernels
    def _learn_blocks(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> int:
        return _fleet_bank_learn_many(X, Y, out, self._PW, self._A, self._work.status)

    def _learn_samples(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> int:
        return _fleet_bank_learn_one(X, Y, out, self._PW, self._A, self._work.status)

    def _predict_samples(self, X: np.ndarray, out: np.ndarray) -> None:
        _fleet_bank_predict_one(X, self._PW, self._A, out)

    def _predict_blocks(self, X: np.ndarray, out: np.ndarray) -> None:
        _fleet_bank_predict_many(X, self._PW, self._A, out)

    # ------------------------------------------------------------- attributes
    @property
    def member_forgetting_(self) -> np.ndarray:
        """Each model's members' factors now, shape (n_models, K) (its window)."""
        index = python_function(member_index)
        n = len(self._grid)
        return np.array([[self._grid[index(int(low), k, self._K, n, self._scout)]
                          for k in range(self._K)] for low in self._state.window.reshape(-1)])

    @property
    def forgetting_weights_(self) -> np.ndarray:
        """Each model's members' weights (sum 1), shape (n_models, K)."""
        v = self._state.weights
        return v / v.sum(axis=1, keepdims=True)

    @property
    def forgetting_(self) -> np.ndarray:
        """Each model's learnt drift rate, shape (n_models,)."""
        return np.einsum("fk,fk->f", self.forgetting_weights_, self.member_forgetting_)

    @property
    def member_coef_(self) -> np.ndarray:
        """Every model's members' weights, shape (n_models, K, n_features) (a copy)."""
        return np.array(self._state.w, dtype=np.float64)

    @property
    def coef_(self) -> np.ndarray:
        """sum_k u_k w_k per model, shape (n_models, n_features)."""
        return np.einsum("fk,fkd->fd", self.forgetting_weights_, self.member_coef_)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_models": 3, "n_features": 4},
            {"n_models": 2, "n_features": 3, "task": "classification",
             "forgetting_grid": (0.0, 0.05)},
            {"n_models": 2, "n_features": 5, "dtype": "float32", "keep_prior": False},
        ]
