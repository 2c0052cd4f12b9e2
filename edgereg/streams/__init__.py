"""Synthetic data streams of the papers edgereg implements (docs/algorithms/streams_and_metrics.md).

Every generator is a plain function that returns a whole stream at once as
float64, C-contiguous NumPy arrays (feed them to ``learn_many``, or loop over
the rows with ``learn_one``). Each is deterministic given ``seed``: it draws
everything from one ``np.random.default_rng(seed)``, in a fixed order, so the
same arguments always give the same arrays bit for bit.

Sample indices are 0-based: row ``t`` of ``X`` is the ``t``-th sample of the
stream. Classification labels are ``-1.0`` / ``+1.0``, the coding every edgereg
classifier predicts in. Concepts, stages and true parameters are returned next
to the data so that tracking error and holdout accuracy on the current concept
(docs/algorithms/streams_and_metrics.md) can be computed.

Where the papers leave a detail open, the docstring says what was chosen.
"""

from .classification import gaussian_mixture_drift, rotating_hyperplane, sea, switch_stream
from .regression import drift_regimes, drifting_linear, mores_synthetic, sparse_state_space

__all__ = [
    "drift_regimes",
    "drifting_linear",
    "gaussian_mixture_drift",
    "mores_synthetic",
    "rotating_hyperplane",
    "sea",
    "sparse_state_space",
    "switch_stream",
]
