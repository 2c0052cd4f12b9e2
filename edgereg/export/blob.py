"""A device's state blob back into a model: ``edgereg.load`` reads it.

The blob is what the exported header's ``<prefix>_blob_header`` and the state
struct written after it make (``export_state(format="bin")`` writes the same):
magic, a JSON description (model class, parameters, the blocks' layout), then
the struct's bytes. Only the learnt fields are read, through the model's own
loading checks (``_copy_state_in``: indices, bounds, symmetry).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

from .header import BLOB_MAGIC


def is_blob(path: Any) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(BLOB_MAGIC)) == BLOB_MAGIC
    except OSError:
        return False


def load_blob(path: Any) -> Any:
    from .._base import StateFileError, model_class
    from .families import family_of

    data = Path(path).read_bytes()
    source = repr(str(path))
    try:
        (size,) = struct.unpack_from("<I", data, len(BLOB_MAGIC))
        start = len(BLOB_MAGIC) + 4
        meta = json.loads(data[start: start + size])
        body = data[start + size + (-(start + size) % 8):]
        model = model_class(meta["model"])(**meta["params"])
    except (ValueError, KeyError, TypeError, struct.error) as exc:
        raise StateFileError(f"{source} is not a readable edgereg state blob: {exc}") from exc
    family = family_of(model)
    layout = [[b.name, str(b.dtype), b.size] for b in family.blocks]
    if [b[:3] for b in meta.get("blocks", [])] != layout or len(body) != meta["struct_bytes"]:
        raise StateFileError(f"{source}: the blob's layout {meta.get('blocks')} does not fit "
                             f"{meta['model']} with these parameters ({layout})")
    blocks = {name: np.frombuffer(body, dtype=np.dtype(dt).newbyteorder("<"), count=n,
                                  offset=at)
              for name, dt, n, at in meta["blocks"]}
    arrays = {}
    for f in family.fields:
        if f.learnt:  # its contiguous runs (one, or a row per member of a bank)
            flat = np.concatenate([blocks[f.block][at: at + n] for at, n in f.runs()])
            size = int(np.prod(f.shape))  # of the span's slots (a float32 in a float64)
            arrays[f.name] = flat.view(f.dtype.newbyteorder("<"))[:size].astype(
                f.dtype).reshape(f.shape)
    model._copy_state_in(arrays, source=source)
    return model
