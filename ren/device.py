"""Devices and buffers.

A device is named ``"python"`` (the NumPy reference), ``"cpu"`` (rendered C) or ``"cuda"``
(rendered CUDA). ``REN_DEVICE`` sets the default for new polynomials; without it the default is
``"python"``. A ``Buffer`` is a flat run of ``size`` words of one dtype on one device; its host
array is a NumPy array of the ring's storage dtype.
"""

from __future__ import annotations

import itertools
from typing import Protocol

import numpy as np

from ren import settings
from ren.errors import RenError

__all__ = [
    "BUFFER_DTYPES",
    "DEVICES",
    "HOST_DEVICES",
    "Buffer",
    "Mirror",
    "canonical_device",
    "devices",
    "register_device",
    "registered_backend",
]

#: Word types a buffer can hold: ring words, and bytes (memory arenas).
BUFFER_DTYPES = {"u8": np.uint8, "u32": np.uint32, "u64": np.uint64}

#: Ren's own devices; ``register_device`` adds others.
DEVICES = ("python", "cpu", "cuda")
#: The devices whose buffers are host memory (NumPy arrays the kernels read and write directly).
HOST_DEVICES = ("python", "cpu")
_ids = itertools.count()
_registered: dict[str, object] = {}


def devices() -> tuple[str, ...]:
    """Every device name a ``Poly`` may use: Ren's own, then the registered ones."""
    return DEVICES + tuple(_registered)


def register_device(name: str, backend: object) -> None:
    """Make ``name`` a device whose kernels run on ``backend``.

    ``backend`` is any object (usually a module) with ``compile(ast, info) -> runner``, where
    ``runner(bufs)`` runs one kernel body on a tuple of ``Buffer``s (slot 0 is written); see the
    "Writing a backend" page of the docs, and check it with ``python -m ren.testing --device
    NAME``. Registering a name again replaces its backend.

    Raises:
        ValueError: for a name that is one of Ren's own devices, or not a lowercase identifier.
        TypeError: when ``backend`` has no callable ``compile``.
    """
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise ValueError(f"a device name must be a lowercase identifier, got {name!r}")
    if name in DEVICES:
        raise ValueError(f"{name!r} is one of Ren's own devices; pick another name")
    if not callable(getattr(backend, "compile", None)):
        raise TypeError(
            f"backend for device {name!r} must have a callable compile(ast, info), "
            f"got {type(backend).__name__}"
        )
    _registered[name] = backend


def unregister_device(name: str) -> None:
    """Forget a device ``register_device`` made (its polys can no longer be realized).

    Raises:
        ValueError: for one of Ren's own devices or a name that was never registered.
    """
    if name in DEVICES:
        raise ValueError(f"{name!r} is one of Ren's own devices; it cannot be unregistered")
    if name not in _registered:
        raise ValueError(f"no device {name!r} was registered")
    del _registered[name]


def registered_backend(name: str) -> object | None:
    """The backend ``register_device`` gave ``name``, or ``None``."""
    return _registered.get(name)


def canonical_device(device: str | None) -> str:
    """The device name for ``device``; ``None`` means ``$REN_DEVICE`` or ``"python"``.

    Raises:
        ValueError: for a name that is not one of ``DEVICES``.
    """
    if device is None:
        device = settings.DEVICE.get()
        where = " (from REN_DEVICE)"
    else:
        where = ""
    if not isinstance(device, str):
        raise TypeError(f"device must be a string, got {type(device).__name__}")
    name = device.strip().lower()
    if name not in DEVICES and name not in _registered:
        raise ValueError(
            f"unknown device {device!r}{where}; the devices are {', '.join(devices())}"
        )
    return name


class Mirror(Protocol):
    """A device copy of a buffer's words, kept by a backend whose memory is not host memory.

    Set as ``buffer.mirror`` on a root buffer (one that is not a view). ``host_access`` runs before
    any host read or write of the buffer's ``array`` (or a view's): it copies the device words to
    the host when they are newer, and from then on treats the device copy as stale. ``release``
    frees the device copy.
    """

    def host_access(self, root: Buffer) -> None:
        """Bring ``root``'s host array up to date before the host reads or writes it."""

    def release(self, root: Buffer) -> None:
        """Free the device copy of ``root``."""


class Buffer:
    """``size`` words of ``dtype`` on ``device``, compared by identity.

    ``dtype`` is ``"u32"``, ``"u64"``, or ``"u8"`` for an arena.

    ``array`` is the host copy (a writable 1-D NumPy array) once the buffer holds data. A buffer
    made with ``base`` and ``offset`` is a view: its words are the bytes ``offset ..`` of the
    ``base`` buffer (an arena of the memory planner), allocated when the arena is. ``no_opt``
    asks the memory planner to leave the buffer as it is.
    """

    __slots__ = (
        "__weakref__",
        "_array",
        "base",
        "device",
        "dtype",
        "id",
        "mirror",
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
        self._array = array
        self.mirror: Mirror | None = None

    @property
    def array(self) -> np.ndarray | None:
        """The host words (a writable 1-D NumPy array), or ``None`` before allocation.

        For a buffer whose words live in device memory (``mirror`` set on it or on its base), this
        first brings the host copy up to date, and the device copy counts as stale afterwards (the
        caller may write through the array).
        """
        root = self.root
        if root.mirror is not None:
            root.mirror.host_access(root)
        return self._array

    @array.setter
    def array(self, value: np.ndarray | None) -> None:
        self._array = value

    def need_array(self) -> np.ndarray:
        """``array`` for a buffer that must hold data (a backend's kernel buffers, say).

        Raises:
            RenError: when the buffer holds no data (never allocated, or freed since).
        """
        array = self.array
        if array is None:
            raise RenError(f"{self!r} holds no data: it was never allocated or has been freed")
        return array

    @property
    def root(self) -> Buffer:
        """The buffer that owns the storage: the base of a view, else the buffer itself.

        A buffer that is its own root has ``offset`` 0.
        """
        return self.base if self.base is not None else self

    @property
    def host_array(self) -> np.ndarray | None:
        """The host array as it is, without syncing a device copy (for backends)."""
        return self._array

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
        return self._array is not None

    def ensure_allocated(self) -> Buffer:
        """Give the buffer storage if it has none, and return the buffer.

        New storage is zeros; a view allocates its base and takes its window. Buffers allocate on
        first use.
        """
        if self._array is None:
            if self.base is not None:
                raw = self.base.ensure_allocated()._array
                assert raw is not None  # ensure_allocated gave the base its storage
                window = raw[self.offset : self.offset + self.nbytes]
                self._array = window.view(BUFFER_DTYPES[self.dtype])
            else:
                self._array = np.zeros(self.size, dtype=BUFFER_DTYPES[self.dtype])
        return self

    def deallocate(self) -> None:
        """Drop the buffer's storage (and its device copy).

        Realizing a graph that still reads the buffer is an error.
        """
        self._array = None
        if self.mirror is not None:
            self.mirror.release(self)
            self.mirror = None

    def __repr__(self) -> str:
        state = "" if self.allocated else ", unallocated"
        where = f" @{self.offset} of #{self.base.id}" if self.base is not None else ""
        return f"Buffer(#{self.id} {self.device} {self.size}x{self.dtype}{where}{state})"
