"""What a compiled backend is made of, and the one dispatch from a kernel to its code.

A compiled backend (``cpu``, ``cuda``, or one of your own) is four parts:

* a **renderer** (``ren.codegen.renderer.Renderer``) that turns an elementwise kernel's body,
  linearized, into source text;
* a **template set** (``Templates``): the source of each template family (NTT, INTT, rescale,
  basis extension), specialized to the ring and parameters of ``KernelInfo.params``;
* a **compiler** that builds source into something callable (``ren.codegen.compiler``, or nvcc);
* a **runtime** that calls it on buffers (ctypes, PyCUDA, the host emulator).

The dispatch on a kernel's family is written once, here: ``dispatch`` picks the runner and
``kernel_source`` the text for a kernel, calling the backend's own parts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from ren.codegen.linearize import linearize
from ren.codegen.renderer import Renderer, render_named
from ren.device import Buffer
from ren.errors import RenError
from ren.ir.kernels import Family, KernelInfo, TemplateParams
from ren.ir.node import Node
from ren.ring import RingSpec

__all__ = ["BoundRunner", "Runner", "Templates", "dispatch", "kernel_source"]

K = TypeVar("K")

#: What a backend makes of a kernel: called with the kernel's buffers (output first), it runs it.
Runner = Callable[[tuple[Buffer, ...]], None]


class BoundRunner(Protocol):
    """A runner bound to its buffers, as a graph runner reads it (an engine ``ExecUnit``)."""

    @property
    def bufs(self) -> tuple[Buffer, ...]:
        """The buffers, in slot order (slot 0 is written)."""

    @property
    def fn(self) -> Runner:
        """The kernel's runner."""


class Templates(ABC, Generic[K]):
    """A backend's template set: the kernel of each template family, built for a ring.

    ``template(info)`` picks the family (the switch is written here, once) and calls the
    backend's own ``ntt``, ``intt``, ``rescale`` or ``base_convert`` with the parameters the
    kernelize pass put on ``info.params``. What they return is the backend's own (a C kernel and
    its tables, a CUDA program); ``text`` gives its source for tools.
    """

    #: The device, for the error on a family without a template.
    device = "this"

    def template(self, info: KernelInfo) -> K:
        """The kernel of ``info``'s template family, for the ring it reads (made once per info).

        Raises:
            RenError: for a family with no template (elementwise, copy).
        """
        made: dict[KernelInfo, K] = self.__dict__.setdefault(
            "_made", {}
        )  # shared by source, kernel
        if info not in made:
            made[info] = self._template(info)
        return made[info]

    def _template(self, info: KernelInfo) -> K:
        prm = info.need_params()
        if info.family is Family.NTT:
            return self.ntt(prm.source)
        if info.family is Family.INTT:
            return self.intt(prm.source)
        if info.family is Family.RESCALE:
            return self.rescale(prm.source, prm.drop)
        if info.family is Family.BASE_CONVERT and prm.target is not None:
            return self.base_convert(prm.source, prm.target)
        raise RenError(f"the {self.device} backend has no template for {info.kind} kernels")

    def source_text(self, info: KernelInfo) -> str:
        """The source text of ``info``'s template."""
        return self.text(self.template(info))

    @abstractmethod
    def ntt(self, ring: RingSpec) -> K:
        """The forward NTT of every limb of ``ring``."""

    @abstractmethod
    def intt(self, ring: RingSpec) -> K:
        """The inverse NTT of every limb of ``ring``."""

    @abstractmethod
    def rescale(self, ring: RingSpec, drop: tuple[int, ...]) -> K:
        """The division by the product of ``drop`` (moduli of ``ring``), rounded."""

    @abstractmethod
    def base_convert(self, ring: RingSpec, target: RingSpec) -> K:
        """The basis extension from ``ring`` to ``target``."""

    @abstractmethod
    def text(self, kernel: K) -> str:
        """The source text of a kernel this set built."""


def dispatch(
    ast: Node,
    info: KernelInfo,
    *,
    elementwise: Callable[[Node], Runner],
    copy: Callable[[TemplateParams], Runner],
    template: Callable[[KernelInfo], Runner],
) -> Runner:
    """The runner of one kernel: ``elementwise(ast)``, ``copy(params)`` or ``template(info)``."""
    if info.family is Family.ELEMENTWISE:
        return elementwise(ast)
    if info.family is Family.COPY:
        return copy(info.need_params())
    return template(info)


def kernel_source(
    ast: Node, info: KernelInfo, renderer: Renderer, templates: Templates[K], copy_note: str
) -> str:
    """The source a backend runs for one kernel: rendered, or its template's, or ``copy_note``."""
    if info.family is Family.ELEMENTWISE:
        return render_named(renderer, linearize(ast))[1]
    if info.family is Family.COPY:
        return copy_note
    return templates.source_text(info)
