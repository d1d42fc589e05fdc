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

__all__ = ["BUFFER_DTYPES", "DEVICES", "Buffer", "canonical_device"]

#: Word types a buffer can hold: ring words, and bytes (memory arenas).
BUFFER_DTYPES = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64}

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
    """``size`` words of ``dtype`` (``"u32"``, ``"u64"``, or ``"u8"`` for an arena) on ``device``;
    compared by identity.

    ``array`` is the host copy (a writable 1-D NumPy array) once the buffer holds data. A buffer
    made with ``base`` and ``offset`` is a view: its words are the bytes ``offset ..`` of the
    ``base`` buffer (an arena of the memory planner), allocated when the arena is. ``no_opt``
    asks the memory planner to leave the buffer as it is.
    """

    __slots__ = (
        "__weakref__",
        "array",
        "base",
        "device",
        "dtype",
        "id",
        "no_opt",
        "offset",
        "size",
    )

    def __init__(
        self,
        device: str,
        dtype: str,
        size: int,
        array: np.ndarray | None = None,
        *,
        base: Buffer | None = None,
        offset: int = 0,
        no_opt: bool = False,
    ) -> None:
        self.device = canonical_device(device)
        if dtype not in BUFFER_DTYPES:
            raise ValueError(f"buffer dtype {dtype!r} is not one of {tuple(BUFFER_DTYPES)}")
        if size < 0:
            raise ValueError(f"buffer size {size} is negative")
        self.dtype, self.size, self.id = dtype, int(size), next(_ids)
        self.base, self.offset, self.no_opt = base, int(offset), no_opt
        if base is not None:
            if array is not None:
                raise ValueError("a view buffer takes its words from its base, not an array")
            if base.device != self.device:
                raise ValueError(f"a {self.device} buffer cannot view a {base.device} arena")
            if offset < 0 or offset + self.nbytes > base.nbytes:
                raise ValueError(
                    f"view of {self.nbytes} bytes at {offset} is outside its "
                    f"{base.nbytes}-byte base"
                )
        if array is not None:
            array = np.ascontiguousarray(array, dtype=BUFFER_DTYPES[dtype]).reshape(-1)
            if array.size != size:
                raise ValueError(f"buffer of {size} words given {array.size} words of data")
        self.array = array

    @property
    def itemsize(self) -> int:
        """Bytes per word."""
        return np.dtype(BUFFER_DTYPES[self.dtype]).itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of storage: ``size * itemsize``."""
        return self.size * self.itemsize

    @property
    def allocated(self) -> bool:
        """Whether the buffer holds data."""
        return self.array is not None

    def ensure_allocated(self) -> Buffer:
        """Give the buffer storage if it has none (zeros; a view allocates its base and takes its
        window). Buffers allocate on first use."""
        if self.array is None:
            if self.base is not None:
                raw = self.base.ensure_allocated().array
                window = raw[self.offset : self.offset + self.nbytes]
                self.array = window.view(BUFFER_DTYPES[self.dtype])
            else:
                self.array = np.zeros(self.size, dtype=BUFFER_DTYPES[self.dtype])
        return self

    def deallocate(self) -> None:
        """Drop the buffer's storage. Realizing a graph that still reads it is an error."""
        self.array = None

    def __repr__(self) -> str:
        state = "" if self.allocated else ", unallocated"
        where = f" @{self.offset} of #{self.base.id}" if self.base is not None else ""
        return f"Buffer(#{self.id} {self.device} {self.size}x{self.dtype}{where}{state})"
