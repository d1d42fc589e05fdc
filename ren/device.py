"""Devices and buffers.

A device is named ``"python"`` (the NumPy reference), ``"cpu"`` (rendered C) or ``"cuda"``
(rendered CUDA). ``REN_DEVICE`` sets the default for new polynomials; without it the default is
``"python"``. A ``Buffer`` is a flat run of ``size`` words of one dtype on one device; its host
array is a NumPy array of the ring's storage dtype.
"""

from __future__ import annotations

import itertools
import os

import numpy as np

from ren.ring import NUMPY_DTYPES

__all__ = ["DEVICES", "Buffer", "canonical_device"]

DEVICES = ("python", "cpu", "cuda")
_ids = itertools.count()


def canonical_device(device: str | None) -> str:
    """The device name for ``device``; ``None`` means ``$REN_DEVICE`` or ``"python"``.

    Raises:
        ValueError: for a name that is not one of ``DEVICES``.
    """
    if device is None:
        device = os.environ.get("REN_DEVICE") or "python"
        where = " (from REN_DEVICE)"
    else:
        where = ""
    if not isinstance(device, str):
        raise TypeError(f"device must be a string, got {type(device).__name__}")
    name = device.strip().lower()
    if name not in DEVICES:
        raise ValueError(
            f"unknown device {device!r}{where}; Ren's devices are {', '.join(DEVICES)}"
        )
    return name


class Buffer:
    """``size`` words of ``dtype`` (``"u32"``/``"u64"``) on ``device``; compared by identity.

    ``array`` is the host copy (a writable 1-D NumPy array) once the buffer holds data.
    """

    __slots__ = ("__weakref__", "array", "device", "dtype", "id", "size")

    def __init__(self, device: str, dtype: str, size: int, array: np.ndarray | None = None) -> None:
        self.device = canonical_device(device)
        if dtype not in NUMPY_DTYPES:
            raise ValueError(f"buffer dtype {dtype!r} is not one of {tuple(NUMPY_DTYPES)}")
        if size < 0:
            raise ValueError(f"buffer size {size} is negative")
        self.dtype, self.size, self.id = dtype, int(size), next(_ids)
        if array is not None:
            array = np.ascontiguousarray(array, dtype=NUMPY_DTYPES[dtype]).reshape(-1)
            if array.size != size:
                raise ValueError(f"buffer of {size} words given {array.size} words of data")
        self.array = array

    @property
    def allocated(self) -> bool:
        """Whether the buffer holds data."""
        return self.array is not None

    def ensure_allocated(self) -> Buffer:
        """Give the buffer storage (zeros) if it has none; buffers allocate on first use."""
        if self.array is None:
            self.array = np.zeros(self.size, dtype=NUMPY_DTYPES[self.dtype])
        return self

    def deallocate(self) -> None:
        """Drop the buffer's storage. Realizing a graph that still reads it is an error."""
        self.array = None

    def __repr__(self) -> str:
        state = "" if self.allocated else ", unallocated"
        return f"Buffer(#{self.id} {self.device} {self.size}x{self.dtype}{state})"
