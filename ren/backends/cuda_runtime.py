"""The runtimes of the cuda device: PyCUDA on a GPU, or the host emulator, behind one interface.

``runtime()`` is the process's runtime, made on first use: ``PyCUDARuntime`` (modules built by
nvcc through PyCUDA, device memory, launches on the device's primary context, made current in
each thread that uses it), or with ``REN_CUDA_EMULATE=1`` ``EmulatedRuntime`` (the same CUDA C
built for the host by ``ren.codegen.cuda_host``, every thread run in turn; "device memory" is host
memory). PyCUDA is imported on first use, not when Ren is imported.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np

from ren import settings
from ren.errors import RenError

if TYPE_CHECKING:
    from ren.codegen.cuda_host import KernelArg

__all__ = [
    "INSTALL_HINT",
    "NVCC_OPTIONS",
    "Allocation",
    "EmulatedRuntime",
    "KernelFunction",
    "Module",
    "PyCUDARuntime",
    "Runtime",
    "runtime",
]

#: nvcc options: no fused multiply-add, so basis extension's float sum rounds as NumPy's does.
NVCC_OPTIONS = ("--fmad=false",)

INSTALL_HINT = (
    "install PyCUDA with `pip install -e '.[cuda]'` (or `pip install pycuda`) on a machine with an "
    "NVIDIA driver; to check Ren's CUDA C without a GPU, set REN_CUDA_EMULATE=1 (it runs the "
    "kernels serially on the host)"
)


# ---------------------------------------------------------------------------------------------
# runtimes: PyCUDA, and the host emulator with the same interface

#: An allocation: the runtime's own handle (a PyCUDA ``DeviceAllocation``, a host byte array),
#: passed back only to the runtime that made it. Any: PyCUDA has no type information, and the
#: backend holds the handle without knowing which runtime's it is.
Allocation: TypeAlias = Any


class KernelFunction(Protocol):
    """A built entry point: a PyCUDA ``Function``, or ``ren.codegen.cuda_host.HostFunction``."""

    def __call__(
        self, *args: KernelArg, block: tuple[int, int, int], grid: tuple[int, int]
    ) -> None:
        """Launch ``grid`` blocks of ``block`` threads on ``args``."""


class Module(Protocol):
    """A built module: a PyCUDA ``SourceModule``, or ``ren.codegen.cuda_host.HostModule``."""

    def get_function(self, name: str) -> KernelFunction:
        """The entry point ``name``."""


class Runtime(Protocol):
    """What the cuda backend asks of a runtime (``PyCUDARuntime``, ``EmulatedRuntime``).

    An allocation is the runtime's own object (a PyCUDA ``DeviceAllocation``, a host array).
    """

    name: str
    description: str

    def enter(self) -> None:
        """Make the runtime usable in the calling thread."""

    def module(self, source: str) -> Module:
        """Build CUDA C ``source`` into a module with ``get_function(name)``."""

    def alloc(self, nbytes: int) -> Allocation:
        """Allocate ``nbytes`` of device memory."""

    def pointer(self, alloc: Allocation) -> int:
        """The device address of an allocation."""

    def htod(self, alloc: Allocation, host: np.ndarray) -> None:
        """Copy ``host`` into the allocation."""

    def dtoh(self, host: np.ndarray, alloc: Allocation) -> None:
        """Copy the allocation into ``host``."""

    def free(self, alloc: Allocation) -> None:
        """Release an allocation."""

    def synchronize(self) -> None:
        """Wait until every launch has finished."""


class PyCUDARuntime:
    """Device memory, modules and launches through PyCUDA, on one GPU and one context.

    The context is the device's primary context, made current in every thread that uses the
    runtime (a CUDA context is current per thread), so kernels may run from several threads.
    """

    name = "pycuda"

    def __init__(self) -> None:
        try:
            import pycuda.driver as drv
            from pycuda.compiler import SourceModule
        except ImportError as e:
            raise RenError(
                f"the cuda device needs PyCUDA, which is not importable ({e}); {INSTALL_HINT}"
            ) from None
        try:
            drv.init()
            index = settings.CUDA_DEVICE.get()
            self.device = drv.Device(index)
            self.context = self.device.retain_primary_context()
            self.context.push()
            self._threads = threading.local()
            self._threads.current = True
        except Exception as e:  # pycuda.driver.Error, or a missing libcuda
            raise RenError(
                f"PyCUDA is installed but no CUDA device is usable ({type(e).__name__}: {e}); "
                f"check the NVIDIA driver (nvidia-smi) and REN_CUDA_DEVICE, or {INSTALL_HINT}"
            ) from None
        self.drv, self._source_module = drv, SourceModule
        self.description = f"{self.device.name()} (PyCUDA)"

    def enter(self) -> None:
        """Make the context current in the calling thread (once per thread)."""
        if not getattr(self._threads, "current", False):
            self.context.push()
            self._threads.current = True

    def module(self, source: str) -> Module:
        """Compile CUDA C ``source`` with nvcc into a loaded module.

        Raises:
            CompileError: if nvcc fails; the message holds its log.
        """
        self.enter()
        try:
            module: Module = self._source_module(
                source, no_extern_c=True, options=list(NVCC_OPTIONS)
            )
            return module
        except Exception as e:  # pycuda.driver.CompileError has the nvcc log
            from ren.codegen.compiler import CompileError

            raise CompileError(f"nvcc (through PyCUDA) failed:\n{e}") from None

    def alloc(self, nbytes: int) -> Allocation:
        """Allocate ``nbytes`` of device memory (at least one byte)."""
        self.enter()
        return self.drv.mem_alloc(max(nbytes, 1))

    def pointer(self, alloc: Allocation) -> int:
        """The device address of an allocation, as an integer kernel argument."""
        return int(alloc)

    def htod(self, alloc: Allocation, host: np.ndarray) -> None:
        """Copy the host array ``host`` into the device allocation ``alloc``."""
        self.enter()
        if host.nbytes:
            self.drv.memcpy_htod(alloc, host)

    def dtoh(self, host: np.ndarray, alloc: Allocation) -> None:
        """Copy the device allocation ``alloc`` into the host array ``host``."""
        self.enter()
        if host.nbytes:
            self.drv.memcpy_dtoh(host, alloc)

    def free(self, alloc: Allocation) -> None:
        """Release a device allocation."""
        alloc.free()

    def synchronize(self) -> None:
        """Wait until every launch on the context has finished."""
        self.enter()
        self.drv.Context.synchronize()


class EmulatedRuntime:
    """The runtime of ``REN_CUDA_EMULATE=1``: the CUDA C runs on the host, without a GPU.

    "Device memory" is host memory, modules are built by ``ren.codegen.cuda_host`` and every
    launch runs its threads one by one.
    """

    name = "emulated"
    description = "CUDA C emulated on the host (REN_CUDA_EMULATE=1)"

    def enter(self) -> None:
        """Nothing to make current: the host is every thread's."""

    def module(self, source: str) -> Module:
        """Build CUDA C ``source`` into a module whose kernels run on the host."""
        from ren.codegen.cuda_host import HostModule

        return HostModule(source)

    def alloc(self, nbytes: int) -> np.ndarray:
        """A zeroed host byte array of ``nbytes`` (at least one byte) standing for device memory."""
        return np.zeros(max(nbytes, 1), dtype=np.uint8)

    def pointer(self, alloc: np.ndarray) -> int:
        """The host address of an allocation, as an integer kernel argument."""
        return alloc.ctypes.data

    def htod(self, alloc: np.ndarray, host: np.ndarray) -> None:
        """Copy the bytes of ``host`` into the allocation ``alloc``."""
        alloc[: host.nbytes] = host.view(np.uint8).reshape(-1)

    def dtoh(self, host: np.ndarray, alloc: np.ndarray) -> None:
        """Copy the allocation ``alloc`` into the bytes of ``host``."""
        host.view(np.uint8).reshape(-1)[:] = alloc[: host.nbytes]

    def free(self, alloc: np.ndarray) -> None:
        """Nothing to release: the array goes with its last reference."""

    def synchronize(self) -> None:
        """Nothing to wait for: every launch has finished when its call returns."""


class _ProcessRuntime:
    """``runtime()``: the process's one runtime, made on first use under a lock.

    Two threads asking first get the same runtime: a second one would build every kernel and
    upload every table again, and (on a GPU) hold the context twice.
    """

    def __init__(self) -> None:
        self._made: PyCUDARuntime | EmulatedRuntime | None = None
        self._lock = threading.Lock()

    def __call__(self) -> PyCUDARuntime | EmulatedRuntime:
        """The process's runtime, made on first use (``REN_CUDA_EMULATE=1``: the emulator)."""
        made = self._made
        if made is None:
            with self._lock:
                made = self._made
                if made is None:
                    made = EmulatedRuntime() if settings.CUDA_EMULATE.get() else PyCUDARuntime()
                    self._made = made
        return made

    def cache_clear(self) -> None:
        """Forget the runtime: the next call makes one again, from the settings then (tests)."""
        with self._lock:
            self._made = None


runtime = _ProcessRuntime()
