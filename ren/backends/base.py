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

from collections.abc import Callable
from typing import Protocol

from ren.codegen.linearize import linearize
from ren.codegen.renderer import Renderer, render_named
from ren.device import Buffer
from ren.ir.kernels import Family, KernelInfo, TemplateParams
from ren.ir.node import Node

__all__ = ["Runner", "Templates", "dispatch", "kernel_source"]

#: What a backend makes of a kernel: called with the kernel's buffers (output first), it runs it.
Runner = Callable[[tuple[Buffer, ...]], None]


class Templates(Protocol):
    """A backend's template set: the source of each template family's kernel for ``info``.

    ``info.params`` holds what the family needs (``source``, the ring read; ``drop`` for a
    rescale; ``target`` for a basis extension). What is returned is the backend's own (a C
    kernel and its tables, a CUDA program); ``source_text`` gives its text for tools.
    """

    def template(self, info: KernelInfo) -> object:
        """The compiled-to-be kernel of a template family for ``info``."""
        ...

    def source_text(self, info: KernelInfo) -> str:
        """The source text of that kernel."""
        ...


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
    ast: Node, info: KernelInfo, renderer: Renderer, templates: Templates, copy_note: str
) -> str:
    """The source a backend runs for one kernel: rendered, or its template's, or ``copy_note``."""
    if info.family is Family.ELEMENTWISE:
        return render_named(renderer, linearize(ast))[1]
    if info.family is Family.COPY:
        return copy_note
    return templates.source_text(info)
