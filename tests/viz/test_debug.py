"""The step-through debugger (``ren.viz.debug``): the ``Stepper``'s screens, the CKKS slot view,
and the ``(ren)`` prompt driven in a real pseudo-terminal.

Oracles, each independent of the debugger:

* Passes: the order of ``ren.engine.schedule.PASSES``, and the rules shown for each pass counted
  against the realization's own ``ctx.record``.
* Kernels: the realization's kernel list, and ``ren.viz.kernel_source`` for their source.
* Buffers: what the first unit writes, against ``ren.reference`` (NTT slots by definition, with
  Python integers) on a copy of its input built separately; a product's coefficients after the
  inverse NTT against the reference's schoolbook product.
* Finishing: ``tolist()`` against a normal ``realize`` of the same program built separately.
* CKKS: the slots shown against ``ckks.decrypt`` of the realized ciphertext, and the precision
  against a plaintext NumPy shadow.
* The terminal session: the script's own result after ``quit`` against the same program
  realized here.
"""

from __future__ import annotations

import functools
import io
import os
import re
import select
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ren import reference
from ren.engine.schedule import PASSES
from ren.poly import Poly
from ren.repoint import stored
from ren.ring import Domain, RingSpec, ntt_primes
from ren.schemes import ckks
from ren.viz.debug import Stepper, debug, main, watch
from ren.viz.trace import kernel_source

# the module holding the watched values (the attribute ren.viz.debug is the function)
dbg = sys.modules["ren.viz.debug.watching"]

ROOT = Path(__file__).resolve().parents[2]
RING = RingSpec(16, ntt_primes(16, 30, 2))  # N=16/limbs=2
PASS_NAMES = [module.__name__.rsplit(".", 1)[-1] for module, _ in PASSES]


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan and run as ``realize`` does by default, whatever the shell has set; no stale watches."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(dbg, "_WATCHED", [])


def program(seed: int = 7) -> tuple[Poly, Poly, Poly]:
    """``a``, ``b`` and ``rotate((a * b).rescale(), 1)``, built from scratch (new buffers)."""
    rng = np.random.default_rng(seed)
    a = Poly.uniform(RING, rng)
    b = Poly.uniform(RING, rng)
    return a, b, (a * b).rescale().rotate(1)


def rules_shown(screen: str) -> Counter:
    """The ``name  xN`` lines under ``rules fired:``."""
    return Counter(
        {m[1]: int(m[2]) for m in re.finditer(r"^  (\S+)\s+x(\d+)\s+e\.g\. ", screen, re.M)}
    )


def kernel_rows(screen: str) -> list[tuple[int, bool, str]]:
    """``(index, ran, name)`` of each row of the ``kernels`` screen."""
    rows = re.findall(r"^(?:->|  )\s+(\d+)\s+(yes|no)\s+(\S+)", screen, re.M)
    return [(int(i), ran == "yes", name) for i, ran, name in rows]


# --------------------------------------------------------------------------------------------
# the Stepper


def test_stepping_visits_every_pass_in_order_with_the_recorded_rules():
    *_, c = program()
    st = Stepper(c)
    record = st.realization.ctx.record
    assert "->  0  input" in st.passes()
    seen = []
    for i in range(1, len(PASSES) + 1):
        screen = st.step()
        m = re.match(r"pass (\d+)/(\d+) (\w+):", screen)
        assert m is not None, screen
        assert (int(m[1]), int(m[2])) == (i, len(PASSES))
        seen.append(m[3])
        assert rules_shown(screen) == Counter(r.rule for r in record.get(m[3], ()))
        assert re.search(rf"^-> +{i}  {m[3]} ", st.passes(), re.M)
    assert seen == PASS_NAMES
    assert st.cursor == len(PASSES)
    assert st.ran == 0  # stepping through the passes runs nothing
    # the graph after the last pass is the kernelized graph: one KERNEL per scheduled kernel
    assert st.graph().count("KERNEL void") == len(st.realization.kernels)
    # the input graph as str() prints it, but for the buffers' names (the debugger's own)
    unnamed = functools.partial(re.sub, r"BUFFER (\w+) \S+ ", r"BUFFER \1 _ ")
    assert unnamed(st.graph(0)) == unnamed(str(st.realization.sink)) != st.graph(0)
    assert "pass 3/12 inject_domains" in st.show_pass(3)
    # past the last pass, a step runs the next unit
    assert st.step().startswith("ran   0  ")
    assert st.ran == 1


def test_the_graph_names_buffers_as_the_kernels_screen_and_buffer_do():
    """After every pass, each buffer the graph prints is one the kernels screen lists (its
    'writes <- reads' names) and ``buffer`` accepts, or a ``#id`` the schedule does not use."""
    *_, c = program()
    st = Stepper(c)
    listed = set()
    for row in st.kernels().splitlines()[2:]:
        writes, _, reads = row.split("  ")[-1].partition(" <- ")
        listed |= {writes.strip(), *(r.strip() for r in reads.split(", ") if r.strip())}
    last = len(st.record.passes)
    for i in range(last + 1):
        shown = set(re.findall(r"BUFFER \w+ (\S+) ", st.graph(i)))
        assert shown, i
        unused = {name for name in shown if name.startswith("#")}
        assert shown - unused <= listed, (i, shown - listed)
        for name in shown - unused:
            assert st.buffer(name).startswith(f"buffer {name} ")
    final = set(re.findall(r"BUFFER \w+ (\S+) ", st.graph(last)))
    assert final == listed  # the kernelized graph holds every buffer of the schedule
    assert "arena[" in st.show_pass(last)  # planned buffers by their arena range, as 'buffer'


def test_kernels_and_source():
    *_, c = program()
    st = Stepper(c)
    kernels = st.realization.kernels
    rows = kernel_rows(st.kernels())
    assert [(i, name) for i, _, name in rows] == [(i, k.info.name) for i, k in enumerate(kernels)]
    assert not any(ran for _, ran, _ in rows)
    for i, k in enumerate(kernels):
        assert st.source(i, "cpu") == kernel_source(k, "cpu")
        assert st.source(i) == kernel_source(k, "python") == str(k.ast) + "\n"


def test_source_of_a_backend_without_one_is_a_clear_error():
    from types import SimpleNamespace

    from ren.backends import python
    from ren.device import register_device, unregister_device
    from ren.errors import RenError

    register_device("bare", SimpleNamespace(compile=python.compile))  # compile only, no source
    try:
        a = Poly(list(range(RING.n)), RING, "bare")
        st = Stepper(a * 3)
        kernel = st.realization.kernels[0]
        assert kernel.info.device == "bare"
        with pytest.raises(RenError, match="device 'bare' has no source"):
            kernel_source(kernel)
        with pytest.raises(RenError, match="device 'bare' has no source"):
            st.source(0)
        assert kernel_source(kernel, "python") == str(kernel.ast) + "\n"
        assert (a * 3).tolist() == [3 * c % RING.Q for c in range(RING.n)]
    finally:
        unregister_device("bare")


def test_run_one_unit_writes_what_the_reference_computes():
    a, _, c = program()
    a2, b2, _ = program()  # the same values in other buffers
    st = Stepper(c)
    first = st.realization.kernels[0]
    assert first.info.kind == "ntt"
    assert stored(a.node)[0] is first.bufs[1]  # kernel 0 is the NTT of a
    total = len(st.realization.kernels)

    screen = st.run(1)
    assert screen.startswith(f"ran   0  {first.info.name} ")
    assert f"1 of {total} units ran" in screen
    assert st.ran == 1 and len(st.realization.units) == total - 1
    assert [ran for _, ran, _ in kernel_rows(st.kernels())] == [True] + [False] * (total - 1)
    assert not c.realized

    want = reference.expected_limbs(reference.evaluate(a2.node), RING, Domain.NTT)
    np.testing.assert_array_equal(st.limbs(0), want)
    rows = re.findall(r"^  mod\s+(\d+): ([\d ]+)", st.buffer(0, "limbs", limit=16), re.M)
    assert [int(q) for q, _ in rows] == list(RING.moduli)
    assert [[int(x) for x in row.split()] for _, row in rows] == want.tolist()
    # the same words as coefficients: a itself
    assert st.coeffs(0) == [reference.centered(x, RING.Q) for x in reference.evaluate(a2.node)]
    # what later kernels write is not there yet
    assert "not written yet: kernel 1" in st.buffer(1)
    with pytest.raises(ValueError, match="not written yet"):
        st.limbs(1)

    # the rescale runs in NTT form: the intt kernel brings the product's last limb back to
    # coefficients, against the schoolbook product modulo that limb's modulus
    intt = next(i for i, k in enumerate(st.realization.kernels) if k.info.kind == "intt")
    st.run(intt + 1 - st.ran)
    product, q = reference.evaluate((a2 * b2).node), RING.moduli[-1]
    assert st.coeffs(intt) == [reference.centered(x % q, q) for x in product]
    shown = re.search(r"first 8 of 16\n  ([-\d ]+)", st.buffer(f"k{intt}")).group(1)
    assert [int(x) for x in shown.split()[:8]] == st.coeffs(intt)[:8]


def test_arena_reuse_is_reported_not_shown():
    *_, c = program()
    st = Stepper(c)
    kernels = st.realization.kernels
    # find a planned buffer whose bytes a later kernel's output reuses
    view = kernels[0].bufs[0]
    assert view.base is not None
    reuser = next(
        i
        for i, k in enumerate(kernels)
        if i > 0 and k.bufs[0].base is view.base and k.bufs[0].offset == view.offset
    )
    st.run(reuser + 1)
    assert "its arena bytes were reused" in st.buffer("k0")
    name = st.buffer(f"k{reuser}").splitlines()[0].split()[1]
    assert f"this is the one kernel {reuser} writes" in st.buffer(name)


def test_arena_shows_the_regions_in_use_now():
    *_, c = program()
    st = Stepper(c)
    plan = st.realization.memory_plan.devices[0]
    for step in range(len(st.realization.kernels)):
        screen = st.arena()
        assert f"memory before kernel {step} " in screen
        in_use = [p for p in plan.buffers if p.first <= step <= p.last]
        assert f"{sum(p.nbytes for p in in_use)} of {plan.arena_bytes} arena bytes" in screen
        for p in in_use:
            assert f"arena[{p.offset}:{p.offset + p.nbytes}]" in screen
        st.run(1)
    assert "every region is free" in st.arena()


def test_arena_without_the_picture(monkeypatch):
    monkeypatch.setitem(sys.modules, "ren.viz.memory", None)  # the import fails
    *_, c = program()
    st = Stepper(c)
    st.run(1)
    screen = st.arena()
    assert st.realization.memory_plan.devices[0].summary() in screen
    assert "holding data a later kernel reads:" in screen


def test_stepping_one_unit_at_a_time_under_poison(monkeypatch):
    """``REN_POISON=1`` fills a region after its last use; stepping must not poison early."""
    monkeypatch.setenv("REN_POISON", "1")
    *_, c = program()
    st = Stepper(c)
    while not st.done:
        st.run(1)
    assert os.environ["REN_POISON"] == "1"
    *_, c2 = program()
    assert c.tolist() == c2.realize().tolist()


def test_finish_realizes_as_realize_does():
    *_, c = program()
    later = c + 1  # built before: repointed to read c's buffer
    st = Stepper(c)
    st.run(2)
    screen = st.finish()
    assert "done" in screen and st.done
    assert c.realized
    *_, c2 = program()
    assert c.tolist() == c2.realize().tolist()
    assert stored(later.node.src[0]) is not None
    assert st.run(1) == "every unit ran already: the realization is done"
    for _ in PASSES:  # the recorded passes can still be read
        assert st.step().startswith("pass ")
    assert st.step() == "the realization is done: nothing left to step"


def test_nothing_to_realize():
    a, *_ = program()
    with pytest.raises(ValueError, match="nothing to realize"):
        Stepper(a)
    out = io.StringIO()
    assert debug(a, stdin=io.StringIO(""), stdout=out) is None
    assert "nothing to realize" in out.getvalue()


# --------------------------------------------------------------------------------------------
# CKKS: decrypted slots and precision against the plaintext shadow

PARAMS = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), insecure=True)


def test_ckks_slots_and_precision_against_the_shadow():
    xs = np.linspace(-1.0, 1.0, PARAMS.slots)
    ys = np.cos(3 * xs)
    with ckks.Context(PARAMS, seed=1) as ctx:
        x, y = ckks.encrypt(xs), ckks.encrypt(ys)
        z = x * y
        st = Stepper(*z.parts).watch(z, ctx, xs * ys)
        assert "watched ciphertexts: ct0" in st.banner()
        assert "part c0 is not written yet" in st.slots()
        writers = [
            i
            for i, k in enumerate(st.realization.kernels)
            if any(stored(st.realization.ctx.becomes_map[p.node])[0] is k.bufs[0] for p in z.parts)
        ]
        st.run(min(writers) + 1)  # c0 written, c1 not yet
        assert "part c1 is not written yet" in st.slots()
        st.finish()
        screen = st.slots(limit=6)
        got = ckks.decrypt(z)
    bits = float(re.search(r"precision: ([\d.]+) bits", screen).group(1))
    assert bits > 25
    assert bits == pytest.approx(ckks.precision_bits(got, xs * ys), abs=0.01)
    shown = re.search(r"slots\[:6\]\s+(.*)", screen).group(1).split()
    values = np.array([complex(s) for s in shown])
    np.testing.assert_allclose(values, got[:6], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(st.decrypt(z), got)


def test_ckks_watch_registers_for_every_stepper():
    xs = np.linspace(-0.5, 0.5, PARAMS.slots)
    with ckks.Context(PARAMS, seed=2) as ctx:
        z = ckks.encrypt(xs) * ckks.encrypt(xs)
        assert watch(z, ctx, xs * xs) is z
        st = Stepper(z)  # a ciphertext: its parts, watched with its own context
        st.finish()
        screen = st.slots()
        got = ckks.decrypt(z)
    assert screen.count("precision:") == 1  # the same ciphertext is shown once
    assert float(re.search(r"precision: ([\d.]+)", screen).group(1)) > 25
    assert ckks.precision_bits(got, xs * xs) > 25
    with pytest.raises(TypeError, match=r"ckks\.Ciphertext"):
        watch(xs)


# --------------------------------------------------------------------------------------------
# the prompt


def screens(output: str) -> list[str]:
    """The screens of a session read from a StringIO: the text after each prompt."""
    return [s.strip("\n") for s in output.split("(ren) ")[1:]]


def test_bad_input_gives_one_line_errors_and_the_loop_goes_on():
    *_, c = program()
    commands = [
        "frobnicate",
        "source 99",
        "source 0 vax",
        "buffer nope",
        "pass 42",
        "pass x",
        "run 0",
        "graph 13",
        "buffer k0 sideways",
        "pass 3",
        "graph",
        "step",
        "kernels",
    ]
    out = io.StringIO()
    st = debug(c, stdin=io.StringIO("\n".join(commands) + "\n"), stdout=out)
    shown = screens(out.getvalue())
    assert len(shown) == len(commands) + 1  # the last prompt read the end of input
    for command, screen in zip(commands[:-4], shown, strict=False):
        assert screen.startswith("error: "), (command, screen)
        assert "\n" not in screen, (command, screen)
    assert "unknown command 'frobnicate'" in shown[0]
    assert "no kernel 99" in shown[1]
    assert "unknown device 'vax'" in shown[2]
    assert "no buffer 'nope'" in shown[3]
    assert "no pass 42" in shown[4]
    # the loop went on: 'pass 3' moved the cursor, 'graph' shows that pass, 'step' the next
    assert shown[-5].startswith("pass 3/12 inject_domains:")
    assert shown[-4] == st.graph(3)  # the graph after pass 3, buffers named as by `buffer`
    assert shown[-3].startswith("pass 4/12 fold_domains:")
    assert kernel_rows(shown[-2])
    # end of input: the rest ran and c is realized
    assert st.done and c.realized
    *_, c2 = program()
    assert c.tolist() == c2.realize().tolist()


SCRIPT = """\
import sys
import numpy as np
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes

ring = RingSpec(16, ntt_primes(16, 30, 2))
rng = np.random.default_rng(7)
a = Poly.uniform(ring, rng)
b = Poly.uniform(ring, rng)
c = (a * b).rescale().rotate(1)
print("result", c.tolist())
d = c * c
print("second", d.tolist()[:2], sys.argv[1:])
"""


def run_main(tmp_path: Path, script: str, argv: list[str], commands: str) -> tuple[int, str]:
    path = tmp_path / "script.py"
    path.write_text(script)
    out = io.StringIO()
    code = main(str(path), argv, stdin=io.StringIO(commands), stdout=out)
    return code, out.getvalue()


def test_main_stops_where_asked_and_the_script_goes_on(tmp_path, capsys):
    *_, c = program()
    want = c.tolist()
    code, out = run_main(tmp_path, SCRIPT, ["--", "-x", "y"], "c\n")
    assert code == 0
    assert "stop 1: realization 0 of the program, at script.py:11 (in ren.poly.Poly.tolist)" in out
    assert "stop 2" not in out
    printed = capsys.readouterr().out
    assert f"result {want}" in printed
    assert "['-x', 'y']" in printed

    code, out = run_main(tmp_path, SCRIPT, ["--all"], "c\nkernels\nq\n")
    assert code == 0
    assert "stop 2: realization 1 of the program, at script.py:13" in out

    code, out = run_main(tmp_path, SCRIPT, ["--skip", "1"], "quit\n")
    assert code == 0
    assert "stop 1: realization 1 of the program" in out

    code, out = run_main(tmp_path, SCRIPT, ["--skip=5"], "")
    assert code == 0 and "ran 2 realizations and none stopped (--skip 5)" in out


def test_main_reports_a_script_that_raises(tmp_path, capsys):
    code, out = run_main(tmp_path, SCRIPT + "raise RuntimeError('boom')\n", [], "c\n")
    assert code == 1
    assert "raised RuntimeError: boom" in out
    assert "Traceback" in capsys.readouterr().err
    code, out = run_main(tmp_path, SCRIPT, ["--skip", "x"], "")
    assert code == 2 and "--skip needs a number" in out
    out = io.StringIO()
    assert main(str(tmp_path / "missing.py"), [], stdout=out) == 2
    assert "no script" in out.getvalue()


CKKS_SCRIPT = """\
import numpy as np
from ren.schemes import ckks
from ren.viz.debug import watch

params = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), insecure=True)
xs = np.linspace(-1, 1, params.slots)
with ckks.Context(params, seed=3) as ctx:
    x = ckks.encrypt(xs)
    z = watch(x * x, ctx, xs * xs)
    z.realize()
    print("precision", ckks.precision_bits(ckks.decrypt(z), xs * xs))
"""


def test_main_on_a_ckks_script(tmp_path, capsys):
    # keygen realizes the secret key, the public key and the relinearization key first
    code, out = run_main(tmp_path, CKKS_SCRIPT, ["--all"], "c\nc\nc\nslots\nrun all\nslots\nq\n")
    assert code == 0
    stops = re.findall(r"^stop (\d+): realization (\d+) of the program, (.*)$", out, re.M)
    assert [(int(a), int(b)) for a, b, _ in stops] == [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert all("in ren.schemes.ckks.Context.__enter__" in where for *_, where in stops[:3])
    assert stops[3][2] == "at script.py:10 (in ren.schemes.ckks.Ciphertext.realize)"
    assert "realizing 1 value: n=64 L=4 u64 ntt python" in out  # the secret key, key ring
    assert "realizing 2 values: 2 x n=64 L=2 u64 ntt python" in out  # x * x: two parts
    assert "part c0 is not written yet" in out
    bits = float(re.search(r"precision: ([\d.]+) bits", out).group(1))
    printed = capsys.readouterr().out
    assert bits == pytest.approx(float(re.search(r"precision ([\d.]+)", printed)[1]), abs=0.01)
    assert bits > 25
    assert "stop 5" not in out  # quit: the decryption ran without stopping


# --------------------------------------------------------------------------------------------
# a real terminal session

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]")


class Terminal:
    """A child process on a pseudo-terminal: ``send`` a line, ``expect`` text."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        master, slave = os.openpty()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True
        )
        os.close(slave)
        self.fd = master
        self.text = ""  # everything read so far, escapes and carriage returns removed
        self.pos = 0  # where the next expect starts looking

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.text += ANSI.sub("", chunk.decode(errors="replace")).replace("\r", "")
        return True

    def expect(self, marker: str, timeout: float = 60.0) -> str:
        """The text up to ``marker`` (which is consumed); fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while (at := self.text.find(marker, self.pos)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 1.0)) and self.proc.poll() is not None):
                raise AssertionError(f"{marker!r} never came; the screen:\n{self.text[self.pos :]}")
        screen, self.pos = self.text[self.pos : at], at + len(marker)
        return screen

    def send(self, line: str) -> str:
        """Type ``line`` and return its screen (up to the next prompt), without the echo."""
        os.write(self.fd, (line + "\n").encode())
        screen = self.expect("(ren) ")
        echo, _, rest = screen.partition("\n")
        assert echo.strip() == line
        return rest

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None or self._read(0.1):
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"the session did not end:\n{self.text[self.pos :]}")
            self._read(0.2)
        os.close(self.fd)
        return self.proc.wait(), self.text[self.pos :]


def test_a_terminal_session(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REN_")}
    env.update(TERM="dumb", PYTHONPATH=str(ROOT), REN_CHECK="1")
    launcher = "import sys; from ren.viz.debug import main; sys.exit(main(sys.argv[1], []))"
    term = Terminal([sys.executable, "-c", launcher, str(script)], tmp_path, env)
    a, _, c = program()
    result = c.tolist()
    ntt_a = reference.expected_limbs(reference.evaluate(a.node), RING, Domain.NTT)
    try:
        banner = term.expect("(ren) ")
        assert "stop 1: realization 0 of the program, at prog.py:11" in banner
        assert "realizing 1 value: n=16 L=1 u32 ntt python" in banner
        assert "type help for the commands" in banner

        passes = term.send("passes")
        assert re.search(r"^->  0  input", passes, re.M)
        assert re.findall(r"^\s+\d+  (\w+) ", passes, re.M) == PASS_NAMES

        step = term.send("step")
        assert step.startswith("pass 1/12 simplify:")
        assert "graph after the pass" in step

        kernels = term.send("kernels")
        rows = kernel_rows(kernels)
        assert len(rows) == 8 and not any(ran for _, ran, _ in rows)
        assert kernels.startswith("8 kernels, 0 ran, next: 0")

        source = term.send("source 0")
        assert source.startswith("STORE void\n  SLOT u32 #0\n  NTT u32")

        ran = term.send("run")
        assert ran.startswith("ran   0  ntt_n16_L2_u32 ")
        assert "1 of 8 units ran; next: 1" in ran

        limbs = term.send("buffer k0 limbs")
        rows = re.findall(r"^  mod\s+(\d+): ([\d ]+) \.\.\. \(8 more\)", limbs, re.M)
        assert [int(q) for q, _ in rows] == list(RING.moduli)
        assert [[int(x) for x in row.split()] for _, row in rows] == ntt_a[:, :8].tolist()
        assert "not written yet: kernel 7" in term.send("buffer b9")

        arena = term.send("arena")
        assert "memory before kernel 1 (ntt_n16_L2_u32); 1 of 8 ran" in arena
        assert "^ kernel 1 runs next" in arena
        assert "holding data a later kernel reads:" in arena

        helped = term.send("help")
        for command in ("passes", "step / s", "source N", "buffer NAME", "continue / c", "quit"):
            assert command in helped
        assert term.send("frobnicate").strip() == (
            "error: unknown command 'frobnicate'; type help for the commands"
        )
        assert term.send("pass 42").startswith("error: no pass 42")

        os.write(term.fd, b"quit\n")
        code, rest = term.finish()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0, rest
    assert "8 of 8 units ran: done" in rest
    assert "the program goes on" in rest
    assert f"result {result}" in rest
    assert "second" in rest  # the second realization ran without stopping
    assert "(ren)" not in rest


ROTATION_KEY_SCRIPT = """\
from ren.schemes import bfv
params = bfv.Params(n=64, q_bits=(50, 50, 50), p_bits=(55, 55), t=257, insecure=True)
ctx = bfv.Context(params, seed=3)
ctx.rotation_key(1)
"""


def test_a_stop_names_the_method_by_the_class_the_program_used(tmp_path):
    """Keys made in a method a shared base defines stop at the scheme's own name for it."""
    code, out = run_main(tmp_path, ROTATION_KEY_SCRIPT, ["--all"], "run all\nq\n")
    assert code == 0
    stops = re.findall(r"^stop (\d+): realization (\d+) of the program, (.*)$", out, re.M)
    wheres = {where for *_, where in stops}
    assert "at script.py:4 (in ren.schemes.bfv.Context.rotation_key)" in wheres, wheres
    assert not any("RlweContext" in where for where in wheres)
