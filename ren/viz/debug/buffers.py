"""The stepper's buffer screens: what a buffer holds at this step, decoded.

The ``arena`` screen (the memory plan around the buffers) is ``ren.viz.debug.arena``'s; its
constants ``ARENA_LINES`` and ``ARENA_LARGEST`` are still importable from here.
"""

from __future__ import annotations

import re

import numpy as np

from ren.ir.op import Op
from ren.ir.region import region_name
from ren.ring import Domain, RingSpec
from ren.ring import arith as rk
from ren.viz.debug.arena import ARENA_LARGEST as ARENA_LARGEST
from ren.viz.debug.arena import ARENA_LINES as ARENA_LINES
from ren.viz.debug.screens import BufferInfo, StepperBase


class BufferViews(StepperBase):
    """The stepper's ``limbs``, ``coeffs`` and ``buffer``."""

    def _resolve(self, ref: int | str) -> tuple[BufferInfo, str]:
        """The buffer ``ref`` names, and a note when the name was ambiguous."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            return self._infos[id(self._kernel(ref).bufs[0])], ""
        if not isinstance(ref, str):
            raise TypeError(f"a buffer is named by a string or a kernel index, got {ref!r}")
        text = ref.strip()
        m = re.fullmatch(r"[kK]?(\d+)(?:\.(\d+))?", text)
        if m and (text[0] in "kK" or m.group(2) is None):
            k = self._kernel(int(m.group(1)))
            slot = int(m.group(2) or 0)
            if slot >= len(k.bufs):
                raise ValueError(
                    f"kernel {m.group(1)} has {len(k.bufs)} buffers (slots 0 to {len(k.bufs) - 1})"
                )
            return self._infos[id(k.bufs[slot])], ""
        hits = [info for info in self._order if info.name == text]
        if not hits:
            names = list(dict.fromkeys(info.name for info in self._order))
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise ValueError(
                f"no buffer {text!r} in this realization; its buffers are {shown} "
                "(or kI: what kernel I writes)"
            )
        if len(hits) == 1:
            return hits[0], ""
        written = [h for h in hits if h.writer is not None and h.writer < self.ran]
        pick = written[-1] if written else hits[0]
        writers = ", ".join(f"k{h.writer}" for h in hits)
        note = (
            f"({text} names {len(hits)} buffers over this realization, written by {writers}; "
            f"this is the one kernel {pick.writer} writes)"
        )
        return pick, note

    def _ring(self, info: BufferInfo) -> tuple[RingSpec | None, Domain | None]:
        if info.ring is not None:
            return info.ring, info.domain
        if self._ring_of_input is None:  # inputs: the AS_RING over them in the lazy graph
            self._ring_of_input = {}
            for node in self.record.input.toposort():
                if node.op is Op.AS_RING and node.src[0].op is Op.BUFFER:
                    self._ring_of_input[id(node.src[0].arg.buffer)] = node.arg
        arg = self._ring_of_input.get(id(info.buffer))
        if arg is not None and arg.ring.L * arg.ring.n == info.buffer.size:
            return arg.ring, arg.domain
        return None, None

    def _overwritten_by(self, info: BufferInfo) -> BufferInfo | None:
        """A later buffer whose writer ran and that shares bytes of ``info``'s arena region."""
        buf = info.buffer
        if buf.base is None or info.writer is None:
            return None
        lo, hi = buf.offset, buf.offset + buf.nbytes
        later: tuple[int, BufferInfo] | None = None  # (its writer, the buffer)
        for other in self._order:
            ob, writer = other.buffer, other.writer
            if other is info or ob.base is not buf.base or writer is None:
                continue
            if info.writer < writer < self.ran and ob.offset < hi and lo < ob.offset + ob.nbytes:
                later = (writer, other) if later is None or writer > later[0] else later
        return None if later is None else later[1]

    def _state(self, info: BufferInfo) -> tuple[np.ndarray | None, str]:
        """The buffer's words, or ``None`` and why they cannot be shown now."""
        if info.writer is not None and info.writer >= self.ran:
            k = self._kernels[info.writer]
            return None, f"not written yet: kernel {info.writer} ({k.info.name}) writes it"
        later = self._overwritten_by(info)
        if later is not None:
            return None, (
                f"its arena bytes were reused after its last use (kernel {info.last}): kernel "
                f"{later.writer} wrote {later.name} over them"
            )
        array = info.buffer.array
        if array is None:
            return None, "it holds no data (freed)"
        return array, ""

    def _decoded(self, ref: int | str | BufferInfo) -> tuple[RingSpec, Domain, np.ndarray]:
        info = ref if isinstance(ref, BufferInfo) else self._resolve(ref)[0]
        ring, domain = self._ring(info)
        if ring is None or domain is None:
            raise ValueError(f"the ring of buffer {info.name} is not known; its words are raw")
        words, why = self._state(info)
        if words is None:
            raise ValueError(f"buffer {info.name}: {why}")
        return ring, domain, words.reshape(ring.L, ring.n)

    def limbs(self, ref: int | str) -> np.ndarray:
        """Buffer ``ref``'s plain residues, an ``(L, n)`` array in its stored domain.

        Raises:
            ValueError: for an unknown buffer, or one whose words cannot be read now (not written
                yet, or its arena bytes were reused).
        """
        ring, _, words = self._decoded(ref)
        return rk.from_mont(ring, words)

    def coeffs(self, ref: int | str) -> list[int]:
        """Buffer ``ref``'s coefficients as Python ints in ``(-Q/2, Q/2]``.

        The coefficients come from the CRT; an NTT-form buffer is converted on a copy.

        Raises:
            ValueError: as ``limbs`` does.
        """
        return self._coeffs_of(ref)

    def _coeffs_of(self, ref: int | str | BufferInfo) -> list[int]:
        ring, domain, words = self._decoded(ref)
        if domain is Domain.NTT:
            words = rk.intt(ring, words)
        return rk.crt(ring, words, centered=True)

    def buffer(self, ref: int | str, as_: str = "coeffs", limit: int = 8) -> str:
        """A buffer's words decoded as ``"limbs"`` or ``"coeffs"``.

        ``"limbs"`` are the plain residues, one row per modulus, in the stored domain;
        ``"coeffs"`` are the CRT big integers, centered (NTT form converted).

        ``ref`` is a name as ``kernels`` shows it (``b3``, ``arena[0:128]``: an arena name used by
        several buffers means the one most recently written), ``kI`` or ``I`` (what kernel ``I``
        writes), or ``kI.S`` (slot ``S`` of kernel ``I``). Only the first ``limit`` words of each
        row are shown.
        """
        if as_ not in ("limbs", "coeffs"):
            raise ValueError(f"a buffer is shown as 'limbs' or 'coeffs', not {as_!r}")
        if not isinstance(limit, int) or limit < 1:
            raise ValueError(f"the number of words to show must be at least 1, got {limit!r}")
        info, note = self._resolve(ref)
        buf = info.buffer
        where = (
            f"view of the {buf.device} arena at byte {buf.offset}, {buf.nbytes} bytes"
            if buf.base is not None
            else f"its own storage, {buf.size} x {buf.dtype} on {buf.device}"
        )
        role = "an input: stored before this realization"
        if info.writer is not None:
            writer = self._kernels[info.writer]
            role = f"written by kernel {info.writer} ({writer.info.name})"
            if writer.region:  # the buffer's region: that of the value written into it
                role += f" in {region_name(writer.region)}"
        used = (
            f"kernel {info.first}"
            if info.first == info.last
            else f"kernels {info.first}-{info.last}"
        )
        lines = [f"buffer {info.name} ({where}); {role}; used by {used}"]
        if note:
            lines.append(note)
        ring, domain = self._ring(info)
        words, why = self._state(info)
        if words is None:
            lines.append(why)
            return "\n".join(lines)
        if ring is None or domain is None:
            raw = " ".join(str(int(w)) for w in words[:limit])
            lines.append(f"ring unknown; raw words: {raw}" + (" ..." if words.size > limit else ""))
            return "\n".join(lines)
        lines.append(f"ring n={ring.n} q={ring.moduli} ({ring.dtype}), {domain.value} form")
        shown = min(limit, ring.n)
        tail = f" ... ({ring.n - shown} more)" if shown < ring.n else ""
        if as_ == "limbs":
            plain = rk.from_mont(ring, words.reshape(ring.L, ring.n))
            what = "NTT slots in ren.ring's order" if domain is Domain.NTT else "coefficients"
            lines.append(f"limbs: plain residues ({what}), first {shown} of {ring.n} per limb")
            width = max(len(str(q)) for q in ring.moduli)
            for i, q in enumerate(ring.moduli):
                row = " ".join(str(int(x)) for x in plain[i, :shown])
                lines.append(f"  mod {q:>{width}}: {row}{tail}")
        else:
            values = self._coeffs_of(info)
            via = ", converted from NTT form on a copy" if domain is Domain.NTT else ""
            lines.append(
                f"coeffs: CRT integers centered in (-Q/2, Q/2]{via}, first {shown} of {ring.n}"
            )
            lines.append("  " + " ".join(str(v) for v in values[:shown]) + tail)
        return "\n".join(lines)
