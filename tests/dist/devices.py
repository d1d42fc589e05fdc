"""Devices of a user's own, for the ren.dist tests: one computes a wrong word, one dies.

Both are Ren's NumPy backend (``ren.backends.python``) with one change, registered in each worker
by ``ren.dist``'s ``setup=`` (the driver registers them too, to save the plans):

* ``faulty``: every elementwise kernel adds 1 to the first word it writes, as a miscompiled kernel
  or a flaky unit would; the audit's reference replay on ``python`` does not;
* ``dying``: a kernel that reads an input whose first 64 words are all zero (the ``poison`` item
  below, a ciphertext whose first part is zero) kills its own process with SIGKILL, mid-batch.
"""

from __future__ import annotations

import os
import signal

from ren.backends import python
from ren.device import register_device
from ren.ir.kernels import Family


class _Faulty:
    def compile(self, ast, info):
        run = python.compile(ast, info)
        if info.family is not Family.ELEMENTWISE:
            return run

        def runner(bufs):
            run(bufs)
            words = bufs[0].need_array()
            words[0] = (int(words[0]) + 1) % info.ring.moduli[0]

        return runner


class _Dying:
    def compile(self, ast, info):
        run = python.compile(ast, info)

        def runner(bufs):
            for buf in bufs[1:]:
                words = buf.need_array()
                if words.size >= 64 and not words[:64].any():
                    os.kill(os.getpid(), signal.SIGKILL)
            run(bufs)

        return runner


def register() -> None:
    """Register both devices in this process (a worker's ``setup``)."""
    register_device("faulty", _Faulty())
    register_device("dying", _Dying())
