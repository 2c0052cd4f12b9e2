"""``edgereg.load``: any file edgereg writes, back into a model.

A model's ``save`` file (``OnlineModel.load``: the class is read from the
file) or a device's state blob written by exported C code
(``edgereg.export.blob``). A module of its own, above both: the blob
reader needs the export's families, which import the models, which import
``_base``, so ``load`` in ``_base`` closed a circle of imports.
"""

from __future__ import annotations

import os
from typing import Any

from ._base import OnlineModel


def load(path: str | os.PathLike) -> Any:
    """Load anything edgereg's ``save`` methods write: a model, or a ``Fleet``.

    The class is read from the file (files in the formats of earlier versions
    too, see ``LEGACY_FORMATS``). Raises ``StateFileError`` for any file that
    is not a usable edgereg state file.

    Examples
    --------
    >>> import os, tempfile
    >>> from edgereg import DFOP, load
    >>> model = DFOP(2)
    >>> _ = model.learn_one([1.0, 2.0], 3.0)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> model.save(path)
    >>> restored = load(path)
    >>> type(restored).__name__, restored.predict_one([1.0, 2.0]) == model.predict_one([1.0, 2.0])
    ('DFOP', True)

    A state blob written by exported C code (``edgereg.export``) is read too.
    """
    # Imported here: the blob reader brings numba's export shims, which a
    # script that only loads a saved model need not pay for.
    from .export.blob import is_blob, load_blob

    if is_blob(path):
        return load_blob(path)
    return OnlineModel.load(path)
