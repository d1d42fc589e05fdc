"""Running the conformance kit, and its ``Report``.

Each case runs on the device and on ``"python"`` and is compared word for word; a failure is
pinpointed to its first wrong kernel.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from ren import settings
from ren.device import canonical_device
from ren.engine.schedule import schedule
from ren.errors import RenError
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.poly import Poly, realize
from ren.ring import RingSpec
from ren.testing.cases import FAMILIES, cases
from ren.testing.rings import Case, ring_label


class DeviceUnavailable(RenError):
    """The device cannot run a kernel at all (its backend is missing a driver or a library)."""


# --------------------------------------------------------------------------------------------
# running and comparing


@dataclass
class CaseResult:
    """The outcome of one case.

    Attributes:
        family: the case's family.
        name: the case's name.
        ring: the ring's label (``n=8 L=3 u32 30-bit``, see ``ring_label``).
        passed: whether every output matched the reference word for word.
        seconds: the time the case took (both devices, the comparison).
        message: why it failed (empty when it passed).
        kernels: the kinds of the kernels the program ran on the device, sorted.
    """

    family: str
    name: str
    ring: str
    passed: bool
    seconds: float
    message: str = ""
    kernels: tuple[str, ...] = ()


@dataclass
class FamilyStats:
    """Counts for one family: cases passed, failed, in all, and the seconds they took."""

    passed: int = 0
    failed: int = 0
    total: int = 0
    seconds: float = 0.0


def stored_words(p: Poly) -> np.ndarray:
    """``p``'s stored words (Montgomery form) as an ``(L, n)`` array, realizing it if needed."""
    return p.words()


def compare(label: str, got: Poly, want: Poly) -> str | None:
    """``None`` when ``got`` stores the same words as ``want``; else what differs first.

    The message names the output, the first differing word's limb and slot (the coefficient, in
    coefficient form), both words, and how many words differ.
    """
    if got.ring != want.ring:
        return f"{label}: ring {got.ring} but the reference has {want.ring}"
    if got.domain is not want.domain:
        return f"{label}: {got.domain.value} form but the reference is in {want.domain.value} form"
    g, w = stored_words(got), stored_words(want)
    bad = np.argwhere(g != w)
    if not bad.size:
        return None
    limb, slot = (int(x) for x in bad[0])
    return (
        f"{label}: limb {limb}, slot {slot} ({got.domain.value} form, q={got.ring.moduli[limb]}): "
        f"got word {int(g[limb, slot])}, expected {int(w[limb, slot])}; "
        f"{len(bad)} of {g.size} words differ"
    )


def describe(e: BaseException) -> str:
    """``Type: message (raised at file:line in function)``."""
    text = f"{type(e).__name__}: {e}"
    frames = traceback.extract_tb(e.__traceback__)
    if frames:
        f = frames[-1]
        text += f" (raised at {f.filename}:{f.lineno} in {f.name})"
    return text


def _device_kernels(outputs: list[tuple[str, Poly]], device: str) -> tuple[str, ...]:
    """The kinds of kernels realizing ``outputs`` runs on ``device`` (schedules, runs nothing)."""
    todo = tuple(p.node for _, p in outputs if not p.realized)
    if not todo:
        return ()
    kernels, _ = schedule(Node(Op.SINK, DType.VOID, todo))
    return tuple(sorted({k.info.kind for k in kernels if k.info.device == device}))


def pinpoint(case: Case, device: str) -> str:
    """Run ``case`` again with ``REN_VALIDATE=1``: the first kernel that differs, or ``""``."""
    try:
        with settings.override(REN_VALIDATE=True):  # this thread only
            realize(*(p for _, p in case.build(device)))
    except RenError as e:
        text = str(e)
        if text.startswith("REN_VALIDATE:"):
            return text.split(" Source:")[0]
    except Exception:
        pass
    return ""


def run_case(case: Case, device: str) -> CaseResult:
    """Run ``case`` on ``device`` and on python and compare every output word by word.

    Never raises for an error inside the case: an exception becomes a failed result with its
    message.
    """
    device = canonical_device(device)
    start = time.perf_counter()
    kernels: tuple[str, ...] = ()
    message = ""
    try:
        want = case.build("python")
        realize(*(p for _, p in want))
    except Exception as e:
        message = f"the python reference raised {describe(e)} (a bug in Ren, not in the device)"
    else:
        try:
            got = case.build(device)
            kernels = _device_kernels(got, device)
            realize(*(p for _, p in got))
            for (label, g), (_, w) in zip(got, want, strict=True):
                if (message := compare(label, g, w) or "") != "":
                    break
        except Exception as e:
            message = describe(e)
        else:
            if message and device != "python":
                where = pinpoint(case, device)
                message += f"\n{where}" if where else ""
        if message and case.detail:
            message += f"\n{case.detail}"
    seconds = time.perf_counter() - start
    return CaseResult(
        case.family, case.name, ring_label(case.ring), not message, seconds, message, kernels
    )


def check_device(device: str) -> str:
    """The canonical name of ``device``, after running one tiny program on it.

    Raises:
        ValueError: for a name that is not a device (the message lists the devices).
        DeviceUnavailable: when the first kernel on the device raises ``RenError`` or
            ``ImportError`` (a missing driver or library). Other errors are left for the cases
            to report.
    """
    name = canonical_device(device)
    try:
        ring = RingSpec(2, (17,))
        p = Poly([1, 2], ring, "python").realize().to(name) + 1
        stored_words(p.realize())
    except (RenError, ImportError) as e:
        raise DeviceUnavailable(
            f"device {name!r} cannot run kernels: {type(e).__name__}: {e}"
        ) from e
    except Exception:
        pass
    return name


@dataclass
class Report:
    """The outcome of a conformance run.

    Attributes:
        device: the device checked.
        seed: the seed of the run.
        quick: whether it was the quick suite.
        results: one ``CaseResult`` per case, in the order they ran.
    """

    device: str
    seed: int = 0
    quick: bool = False
    results: list[CaseResult] = field(default_factory=list)

    @property
    def families(self) -> dict[str, FamilyStats]:
        """Counts per family that ran, in ``FAMILIES`` order."""
        out: dict[str, FamilyStats] = {}
        for f in FAMILIES:
            for r in self.results:
                if r.family == f:
                    s = out.setdefault(f, FamilyStats())
                    s.total += 1
                    s.passed += r.passed
                    s.failed += not r.passed
                    s.seconds += r.seconds
        return out

    @property
    def failures(self) -> list[CaseResult]:
        """The failed cases."""
        return [r for r in self.results if not r.passed]

    @property
    def ok(self) -> bool:
        """Whether every case passed (and at least one ran)."""
        return bool(self.results) and not self.failures

    def table(self) -> str:
        """A plain text table: one row per family, a total, then every failure."""
        mode = "quick" if self.quick else "full"
        rings = len({r.ring for r in self.results})
        lines = [
            f"Ren conformance: device {self.device!r} against 'python' "
            f"({mode}: {rings} rings, seed {self.seed})",
            "",
            f"{'family':<14}{'passed':>8}{'failed':>8}{'total':>8}{'seconds':>10}  "
            "kernels run on the device",
        ]
        stats = self.families
        for name, s in stats.items():
            kinds = sorted({k for r in self.results if r.family == name for k in r.kernels})
            counts = f"{s.passed:>8}{s.failed:>8}{s.total:>8}{s.seconds:>10.2f}"
            lines.append(f"{name:<14}{counts}  {', '.join(kinds)}")
        total = FamilyStats(
            sum(s.passed for s in stats.values()),
            sum(s.failed for s in stats.values()),
            sum(s.total for s in stats.values()),
            sum(s.seconds for s in stats.values()),
        )
        lines.append(
            f"{'all':<14}{total.passed:>8}{total.failed:>8}{total.total:>8}{total.seconds:>10.2f}"
        )
        lines.append("")
        if self.ok:
            lines.append(f"OK: all {total.total} cases match the python backend word for word.")
        elif not self.results:
            lines.append("No case ran.")
        else:
            lines.append(f"FAILED: {total.failed} of {total.total} cases.")
            for r in self.failures:
                lines.append("")
                lines.append(f"[{r.family}] {r.name} ({r.ring})")
                body = r.message.splitlines() or [""]
                lines += ["  " + (ln if len(ln) <= 400 else ln[:400] + " ...") for ln in body[:8]]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The report in a notebook: the families as a table, the verdict, the first failures."""
        from ren.display import box, esc, fields, table

        stats = self.families
        rows = [
            (name, s.passed, s.failed, s.total, f"{s.seconds:.2f}",
             ", ".join(sorted({k for r in self.results if r.family == name for k in r.kernels})))
            for name, s in stats.items()
        ]  # fmt: skip
        failed = self.failures
        verdict = (
            "no case ran" if not self.results
            else f"OK: all {len(self.results)} cases match the python backend word for word"
            if self.ok else f"FAILED: {len(failed)} of {len(self.results)} cases"
        )  # fmt: skip
        head = ("family", "passed", "failed", "total", "seconds", "kernels run on the device")
        parts = [
            fields([("device", self.device), ("suite", "quick" if self.quick else "full"),
                    ("seed", self.seed), ("verdict", verdict)]),
            table(head, rows, caption="against the python backend, word for word"),
            *(f"<pre>[{esc(r.family)}] {esc(r.name)} ({esc(r.ring)})\n"
              f"{esc(chr(10).join(r.message.splitlines()[:8]))}</pre>" for r in failed[:8]),
        ]  # fmt: skip
        if len(failed) > 8:
            parts.append(f"<p>... and {len(failed) - 8} more failures (report.failures)</p>")
        return box(f"Ren conformance: {self.device}", *parts)

    def to_json(self) -> dict[str, object]:
        """The report as plain JSON data: the run, counts per family, and every case."""
        return {
            "device": self.device,
            "seed": self.seed,
            "quick": self.quick,
            "ok": self.ok,
            "families": {k: asdict(v) for k, v in self.families.items()},
            "cases": [asdict(r) for r in self.results],
        }


def run_conformance(
    device: str,
    *,
    quick: bool = False,
    seed: int = 0,
    families: Sequence[str] | None = None,
    rings: Sequence[RingSpec] | None = None,
    progress: Callable[[Case, CaseResult | None], None] | None = None,
) -> Report:
    """Run the conformance suite on ``device`` against the python backend.

    Args:
        device: a device name (Ren's own or one given to ``ren.device.register_device``).
        quick: run the quick suite (two small rings).
        seed: the seed of every input and random program; the same seed runs the same cases.
        families: the families to run (default: all of ``FAMILIES``).
        rings: rings to use instead of the suite's own.
        progress: called as ``progress(case, None)`` before each case runs and
            ``progress(case, result)`` after.

    Returns:
        The ``Report``; ``report.ok`` tells whether every case passed.

    Raises:
        ValueError: for an unknown device or family.
        DeviceUnavailable: when the device cannot run a kernel at all (see ``check_device``).
    """
    todo = cases(families, quick=quick, seed=seed, rings=rings)
    device = check_device(device)
    report = Report(device, seed, quick)
    for case in todo:
        if progress is not None:
            progress(case, None)
        result = run_case(case, device)
        report.results.append(result)
        if progress is not None:
            progress(case, result)
    return report
