"""The debugger starting at a named region (``--region``), and ``arena`` on a bootstrap's plan.

Oracles, each independent of the debugger's screens:

* Where it stops: the first kernel whose ``ScheduledKernel.region`` holds the name, found here in
  a recording (``ren.viz.record``) of the same program, or in the realization's kernel list.
* The arena: the realization's own ``MemoryPlan`` (its size, lower bound, buffers and their
  lifetimes), the bytes in use counted here from the buffers alive at the cursor.
* The values: the script's own printed result, and the bootstrap's result decrypted against the
  plaintext it encrypts (a precision in bits).
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import ren
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.schemes import ckks
from ren.viz.__main__ import main as cli
from ren.viz.debug import Debugger, Stepper, debug, main
from ren.viz.debug.buffers import ARENA_LARGEST, ARENA_LINES
from ren.viz.debug.screens import region_arg, region_matches
from ren.viz.trace import record
from tests.viz.boot_input import boot_toy_input

dbg = sys.modules["ren.viz.debug.watching"]
RING = RingSpec(16, ntt_primes(16, 30, 2))


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan and run as ``realize`` does by default, whatever the shell has set; no stale watches."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(dbg, "_WATCHED", [])


# --------------------------------------------------------------------------------------------
# naming a region


@pytest.mark.parametrize(
    ("name", "hit"),
    [
        ("bootstrap", True),  # a name of the path
        ("eval_mod", True),
        ("multiply", True),
        ("bootstrap/eval_mod", True),  # a run of names
        ("eval_mod/evaluate_polynomial/multiply", True),
        ("bootstrap.eval_mod", True),  # dots for slashes
        ("bootstrap/multiply", False),  # not consecutive
        ("eval", False),  # a whole name only
        ("evaluate_polynomial/eval_mod", False),  # in order
        ("rotate", False),
    ],
)
def test_region_matches_a_name_or_a_run_of_names(name, hit):
    path = ("bootstrap", "eval_mod", "evaluate_polynomial", "multiply")
    assert region_matches(path, name) is hit


def test_a_name_with_a_dot_matches_itself_first():
    assert region_matches(("level 1.5", "x"), "level 1.5")
    assert not region_matches((), "bootstrap")


@pytest.mark.parametrize("bad", ["", " ", "/", "a//b"])
def test_an_empty_region_name_is_refused(bad):
    with pytest.raises(ValueError, match="a region name is text such as 'bootstrap'"):
        region_arg(bad)
    with pytest.raises(TypeError, match="a region is named by a str"):
        region_arg(3)


# --------------------------------------------------------------------------------------------
# the script runner: --region

SCRIPT = """\
import ren
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes

ring = RingSpec(16, ntt_primes(16, 30, 2))
a = Poly(list(range(16)), ring)
print("first", (a + 1).tolist()[:4])
with ren.region("outer"):
    b = a * a
    with ren.region("inner"):
        c = (b + a).rescale()
print("second", c.tolist()[:4])
with ren.region("inner"):
    d = a * 3 + 1
print("third", d.tolist()[:4])
"""


def program() -> tuple[list[int], list[int], list[tuple[str, ...]]]:
    """The script's program built here: its results, and the regions of its second realization."""
    ring = RingSpec(16, ntt_primes(16, 30, 2))
    a = Poly(list(range(16)), ring)
    with ren.region("outer"):
        b = a * a
        with ren.region("inner"):
            c = (b + a).rescale()
    with ren.region("inner"):
        d = a * 3 + 1
    with record() as trace:
        second = c.tolist()[:4]
    return second, d.tolist()[:4], [tuple(k.region) for k in trace.realizations[-1].kernels]


def run_main(tmp_path: Path, argv: list[str], commands: str) -> tuple[int, str]:
    path = tmp_path / "script.py"
    path.write_text(SCRIPT)
    out = io.StringIO()
    code = main(str(path), argv, stdin=io.StringIO(commands), stdout=out)
    return code, out.getvalue()


def test_region_stops_at_the_first_kernel_in_the_region(tmp_path, capsys):
    second, third, regions = program()
    first_inner = next(i for i, path in enumerate(regions) if "inner" in path)
    assert first_inner > 0  # the outer multiply's kernels come first
    code, out = run_main(tmp_path, ["--region", "inner"], "kernels\nc\n")
    assert code == 0
    assert "stop 1: realization 1 of the program, at script.py:12" in out
    assert "stop 2" not in out  # the first only, without --all
    assert f"to reach a region matching 'inner'\nnext: kernel {first_inner} " in out
    assert re.search(rf"^-> +{first_inner} +no ", out, re.M)  # the kernels screen's cursor
    assert f"{len(regions)} kernels, {first_inner} ran, next: {first_inner}" in out
    printed = capsys.readouterr().out
    assert f"second {second}" in printed and f"third {third}" in printed


def test_region_by_path_and_with_all(tmp_path, capsys):
    code, out = run_main(tmp_path, ["--region=outer/inner"], "c\n")
    assert code == 0 and "stop 1: realization 1 of the program" in out
    code, out = run_main(tmp_path, ["--all", "--region", "inner"], "c\nc\nc\n")
    stops = re.findall(r"^stop (\d+): realization (\d+) of the program", out, re.M)
    assert stops == [("1", "1"), ("2", "2")]  # the realizations with an 'inner' kernel only
    # the third realization is in 'inner' from its first kernel: nothing runs before the prompt
    assert "the first in a region matching 'inner': nothing ran" in out
    code, out = run_main(tmp_path, ["--skip", "2", "--region", "inner"], "c\n")
    assert re.findall(r"^stop \d+: realization (\d+)", out, re.M) == ["2"]


def test_a_region_that_never_comes_lists_the_names_seen(tmp_path, capsys):
    code, out = run_main(tmp_path, ["--region", "bootstrap"], "")
    assert code == 0 and "stop" not in out
    assert (
        "the script ran 3 realizations and none had a kernel in a region matching 'bootstrap'; "
        "the region names seen: outer, inner"
    ) in out
    assert "third" in capsys.readouterr().out  # the script ran to its end
    code, out = run_main(tmp_path, ["--region"], "")
    assert code == 2 and "--region needs a region name" in out
    code, out = run_main(tmp_path, ["--region", ""], "")
    assert code == 2 and "a region name is text" in out


def test_the_command_line_takes_region_and_its_value(tmp_path, capsys):
    path = tmp_path / "script.py"
    path.write_text(SCRIPT)
    assert cli(["debug", "--region", "nowhere", str(path)]) == 0
    out = capsys.readouterr().out
    assert "matching 'nowhere'; the region names seen: outer, inner" in out
    assert cli(["debug", "--help"]) == 0
    assert "--region NAME" in capsys.readouterr().out


def test_debug_of_a_value_starts_at_a_region():
    a = Poly(list(range(16)), RING)
    with ren.region("outer"):
        b = a * a
        with ren.region("inner"):
            c = (b + a).rescale()
    want = Poly(list(range(16)), RING)
    want = ((want * want + want).rescale()).tolist()
    out = io.StringIO()
    assert debug(c, region="elsewhere", stdout=out) is None
    assert "no kernel in this realization is in a region matching 'elsewhere'" in out.getvalue()
    assert "region names are: outer, inner" in out.getvalue()
    assert not c.realized  # nothing ran: the value can be stepped through again
    out = io.StringIO()
    st = debug(c, region="inner", stdin=io.StringIO("c\n"), stdout=out)
    assert st is not None and st.done
    screen = out.getvalue()
    first = next(i for i, k in enumerate(st.realization.kernels) if "inner" in k.region)
    assert screen.startswith(f"ran kernel{'s' * (first > 1)} 0")
    assert f"next: kernel {first} " in screen.splitlines()[1]
    assert c.tolist() == want


def test_a_small_arena_is_shown_whole():
    a = Poly(list(range(16)), RING)
    st = Stepper((a * a + a).rescale())
    st.run(1)
    assert st.arena() == st.arena(full=True)
    assert "a summary" not in st.arena()


# --------------------------------------------------------------------------------------------
# a bootstrap: region, and arena


@pytest.fixture(scope="module")
def boot() -> SimpleNamespace:
    """A boot-toy bootstrap stepped to EvalMod, its arena screens, and the prompt's."""
    with pytest.MonkeyPatch.context() as m:
        for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DEVICE"):
            m.delenv(var, raising=False)
        _, ctx, z, ct = boot_toy_input()
        out = ckks.bootstrap(ct)
        st = Stepper(out)
        kernels = list(st.realization.kernels)
        start, start_full = st.arena(), st.arena(full=True)
        reached = st.run_to_region("eval_mod")
        ran = st.ran
        summary, full = st.arena(), st.arena(full=True)
        screens = io.StringIO()
        Debugger(st, io.StringIO("arena\narena all\narena some\nc\n"), screens).loop()
        return SimpleNamespace(
            ctx=ctx,
            z=z,
            out=out,
            plan=st.realization.memory_plan,
            kernels=kernels,
            order=list(st._order),
            start=start,
            start_full=start_full,
            reached=reached,
            ran=ran,
            summary=summary,
            full=full,
            prompt=screens.getvalue().split("(ren) "),
        )


def test_run_to_region_stops_at_the_first_eval_mod_kernel(boot):
    first = next(i for i, k in enumerate(boot.kernels) if "eval_mod" in k.region)
    assert boot.ran == first > 0
    line = f"ran kernels 0-{first - 1} ({first} units in "
    assert boot.reached.startswith(line)
    assert f"next: kernel {first} {boot.kernels[first].info.name} in bootstrap/eval_mod" in (
        boot.reached
    )
    assert ckks.precision_bits(boot.ctx.decrypt(boot.out), boot.z) > 20  # stepped, then finished


def test_arena_on_a_bootstrap_fits_a_screen(boot):
    (d,) = boot.plan.devices
    assert len(d.buffers) > 1000
    for summary, full in ((boot.start, boot.start_full), (boot.summary, boot.full)):
        lines = summary.splitlines()
        assert len(lines) <= ARENA_LINES
        assert f"arena {d.arena_bytes} B; peak {d.lower_bound_bytes} B live at once" in summary
        assert f"{len(d.buffers)} buffers over {len(boot.kernels)} kernels" in summary
        assert lines[-1].startswith(f"(a summary: 'arena all' shows all {len(full.splitlines())} ")
        assert len(full.splitlines()) > 10 * ARENA_LINES
    step = boot.ran
    now = [p for p in d.buffers if p.first <= step <= p.last]
    used = sum(p.nbytes for p in now)
    assert f"{used} of {d.arena_bytes} arena bytes in use on python" in boot.summary
    listed = [int(n) for n in re.findall(r"^  arena\[\d+:\d+\] +(\d+) B", boot.summary, re.M)]
    assert listed == sorted((p.nbytes for p in now), reverse=True)[:ARENA_LARGEST]
    m = re.search(rf"\^ kernel {step} runs next \(this column: kernels (\d+)-(\d+)\)", boot.summary)
    assert m and int(m[1]) <= step <= int(m[2])
    rows = [
        line for line in boot.summary.splitlines() if re.match(r"\s*\d+(?:\.\d+)? \w+ \|", line)
    ]
    assert 0 < len(rows) <= 8 and any(line.endswith(" in use") for line in rows)
    own = [info for info in boot.order if info.buffer.base is None]
    assert f"own storage (outside the arena): {len(own)} buffers" in boot.summary


def test_arena_all_shows_every_buffer(boot):
    (d,) = boot.plan.devices
    for p in d.buffers:  # the picture's key: every planned buffer, with its lifetime
        assert f"=arena[{p.offset}:{p.offset + p.nbytes}] k{p.first}-{p.last}" in boot.full
    step = boot.ran
    for p in d.buffers:
        if p.first <= step <= p.last:  # every buffer in use, listed
            assert re.search(
                rf"^  arena\[{p.offset}:{p.offset + p.nbytes}\] +{p.nbytes} B  kernels "
                rf"{p.first}-{p.last}",
                boot.full,
                re.M,
            )
    for info in boot.order:
        if info.buffer.base is None:
            assert re.search(rf"^  {re.escape(info.name)} +{info.buffer.nbytes} B", boot.full, re.M)


def test_the_prompt_shows_the_summary_and_arena_all(boot):
    arena, arena_all, bad = boot.prompt[1:4]
    assert arena.rstrip("\n") == boot.summary
    assert arena_all.rstrip("\n") == boot.full
    assert bad.strip() == "error: usage: arena [all], not 'arena some'"
