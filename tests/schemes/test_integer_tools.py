"""BFV and BGV with Ren's tools: saved ``ren.jit`` plans (in this process and another) and the
step-through debugger (``ren.viz.debug``), through the integer ciphertext's protocols.

Oracles: NumPy on int64 arrays mod ``t`` for every decryption; the jitted function's own result
in the saving process, word for word (``Poly.limbs()``); the plan files of two key sets compared
byte for byte (a plan holds no key and no value); a subprocess in which the scheduler and the
memory planner raise; and, for the debugger, ``decrypt`` and ``noise_budget`` of the realized
ciphertext, computed apart from the screens.
"""

from __future__ import annotations

import io
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ren
from ren.schemes import bgv
from ren.viz.debug import Stepper, main, watch
from tests.schemes.integer_cases import N, T, small, values

dbg = sys.modules["ren.viz.debug.watching"]  # where the watched values live
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_stale_watches(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(dbg, "_WATCHED", [])


def program(a, b):
    """What the saved plans run: a product, a rotation of the rows and a sum."""
    return (a * b).rotate_rows(1) + a


def want(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.roll((a * b).reshape(2, N // 2), -1, axis=1).reshape(-1) + a) % T


# ---------------------------------------------------------------------------------------------
# saved plans


def test_a_saved_plan_holds_no_key_and_gives_the_jitted_words(scheme, tmp_path):
    a, b = values(1), values(2)
    files, fingerprints = [], []
    for seed in (1, 2):  # other keys, other values: the same plan file, byte for byte
        with scheme.Context(small(scheme), seed=seed) as ctx:
            ctx.rotation_key(1)  # made before: the stored keys name it
            f = ren.jit(program)
            x, y = ctx.encrypt(a * seed), ctx.encrypt(b)
            path = tmp_path / f"prog{seed}.renplan"
            f.export(path, x, y, stored={"keys": ctx.evaluation_keys()})
            files.append(path.read_bytes())
            fingerprints.append(ctx.key_fingerprint.encode())
    assert files[0] == files[1]
    assert not any(fp in files[0] for fp in fingerprints)  # which values share keys, no key
    with scheme.Context(small(scheme), seed=3) as ctx:  # a third party's keys, given at load
        ctx.rotation_key(1)
        loaded = ren.load(tmp_path / "prog1.renplan", stored={"keys": ctx.evaluation_keys()})
        x, y = ctx.encrypt(a), ctx.encrypt(b)
        out = loaded(x, y)
        assert isinstance(out, scheme.Ciphertext) and out.context is ctx
        assert (out.level, out.correction) == (2, 1)
        assert np.array_equal(ctx.decrypt(out), want(a, b))
        eager = program(x, y)
        assert all(
            np.array_equal(p.limbs(), q.limbs())
            for p, q in zip(out.parts, eager.parts, strict=True)
        )


def test_a_bgv_plan_keeps_the_correction(tmp_path):
    a, b = values(3), values(4)
    with bgv.Context(small(bgv), seed=4) as ctx:
        f = ren.jit(lambda u, v: bgv.mod_switch(u * v))
        x, y = ctx.encrypt(a), ctx.encrypt(b)
        path = f.export(tmp_path / "ms.renplan", x, y, stored={"keys": ctx.evaluation_keys()})
        out = ren.load(path, stored={"keys": ctx.evaluation_keys()})(x, y)
        assert (out.level, out.correction) == (1, pow(ctx.params.q_moduli[2], -1, T))
        assert np.array_equal(ctx.decrypt(out), a * b % T)


@pytest.mark.cc
def test_another_process_replays_a_saved_plan_without_the_scheduler(scheme, tmp_path):
    a, b = values(5), values(6)
    name = scheme.__name__.rsplit(".", 1)[-1]
    with scheme.Context(small(scheme), seed=5, device="cpu") as ctx:
        ctx.rotation_key(1)
        f = ren.jit(program)
        x, y = ctx.encrypt(a), ctx.encrypt(b)
        f.export(tmp_path / "prog.renplan", x, y, stored={"keys": ctx.evaluation_keys()})
        mine = f(x, y)
        (tmp_path / "params").write_bytes(ctx.params.to_bytes())
        (tmp_path / "keys").write_bytes(ctx.evaluation_keys().to_bytes())
        (tmp_path / "x").write_bytes(x.to_bytes())
        (tmp_path / "y").write_bytes(y.to_bytes())
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        import ren
        from ren.engine import memory, schedule, schedule_cache
        from ren.schemes import {name} as scheme
        folder = Path({str(tmp_path)!r})
        params = scheme.Params.from_bytes((folder / "params").read_bytes(), insecure=True)
        blob = (folder / "keys").read_bytes()
        keys = scheme.EvaluationKeys.from_bytes(blob, "cpu", insecure=True)
        def refuse(*args, **kwargs):
            raise RuntimeError("the scheduler or the planner ran")
        with scheme.Context(params, device="cpu", keys=keys) as server:
            x = scheme.Ciphertext.from_bytes((folder / "x").read_bytes())
            y = scheme.Ciphertext.from_bytes((folder / "y").read_bytes())
            for p in x.parts + y.parts:
                p.realize()
            schedule.schedule = schedule_cache.schedule = refuse
            memory.plan_memory = schedule_cache.plan_memory = refuse
            f = ren.load(folder / "prog.renplan", stored={{"keys": keys}})
            out = f(x, y)
            assert out.context is server
            (folder / "out").write_bytes(out.to_bytes())
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    out = scheme.Ciphertext.from_bytes((tmp_path / "out").read_bytes(), ctx)
    assert all(
        np.array_equal(p.limbs(), q.limbs()) for p, q in zip(out.parts, mine.parts, strict=True)
    )
    assert np.array_equal(ctx.decrypt(out), want(a, b))


# ---------------------------------------------------------------------------------------------
# the debugger


def test_the_debugger_shows_the_level_the_budget_and_the_slots(scheme):
    a, b = values(7), values(8)
    with scheme.Context(small(scheme), seed=7) as ctx:
        z = ctx.encrypt(a) * ctx.encrypt(b)
        st = Stepper(*z.parts).watch(z, ctx, a * b % T)
        assert "watched ciphertexts: ct0" in st.banner()
        assert "part c0 is not written yet" in st.slots()
        st.finish()
        screen = st.slots(limit=6)
        got, budget = ctx.decrypt(z), ctx.noise_budget(z)
    assert np.array_equal(got, a * b % T)  # the oracle: NumPy mod t
    assert f"ct0: level 2, noise budget {budget} bits" in screen and budget > 0
    shown = re.search(r"slots\[:6\]\s+(.*)", screen).group(1).split()
    assert [int(s) for s in shown] == [int(v) for v in got[:6]]  # integers, shown as integers
    label = r"\(exact mod t: log2\(t\) or 0, vs expected; over 64 slots\)"  # what it measures
    bits = float(re.search(r"precision: ([\d.]+) bits " + label, screen).group(1))
    assert bits == pytest.approx(math.log2(T), abs=0.01)
    assert np.array_equal(st.decrypt(z), got)
    wrong = st.slots(z, ctx, (a * b + 1) % T)  # one off in every slot: no bit is right
    assert "precision: 0.00 bits" in wrong


def test_the_view_without_the_secret_key(scheme):
    with scheme.Context(small(scheme), seed=8) as ctx:
        server = scheme.Context(ctx.params, keys=ctx.evaluation_keys())
        z = server.multiply(ctx.encrypt(values(9)), ctx.encrypt(values(10)))
        view = z.__ren_watch__()
        assert view.summary == "level 2"
        st = Stepper(*z.parts).watch(z)
        st.finish()
        screen = st.slots()
        assert "ct0: level 2\n" in screen and "holds no secret key, so it cannot decrypt" in screen
        with_key = z.__ren_watch__(ctx)  # the client's context decrypts the server's value
        assert with_key.summary == f"level 2, noise budget {ctx.noise_budget(z)} bits"
        got = with_key.decrypt(z.parts)
        assert np.array_equal(got, values(9) * values(10) % T)
        with pytest.raises(TypeError, match=r"context must be a bfv\.Context or bgv\.Context"):
            watch(z, 3)
        with pytest.raises(ValueError, match="shape"):
            with_key.precision_bits(got, got[:3])


SCRIPT = """\
import numpy as np
from ren.schemes import {name} as scheme
from ren.viz.debug import watch

params = scheme.Params(n=64, q_bits=(50, 50, 50), p_bits=(55, 55), t=257, insecure=True)
xs = np.arange(64)
with scheme.Context(params, seed=3) as ctx:
    x = scheme.encrypt(xs)
    z = watch(x * x, ctx, xs * xs)
    z.realize()
    print("decrypted", scheme.decrypt(z)[:4].tolist(), ctx.noise_budget(z))
"""


def test_the_debugger_steps_through_a_script(scheme, tmp_path, capsys):
    name = scheme.__name__.rsplit(".", 1)[-1]
    path = tmp_path / "script.py"
    path.write_text(SCRIPT.format(name=name))
    out = io.StringIO()
    commands = "c\nc\nc\nslots\nrun all\nslots\nq\n"
    code = main(str(path), ["--all"], stdin=io.StringIO(commands), stdout=out)
    assert code == 0
    text = out.getvalue()
    stops = re.findall(r"^stop (\d+): realization (\d+) of the program, (.*)$", text, re.M)
    assert stops[-1][2] == "at script.py:10 (in ren.schemes.integer.types.Ciphertext.realize)"
    assert "stop 5" not in text  # the budget in the summary ran apart: no stop of its own
    printed = capsys.readouterr().out
    decrypted = re.search(r"decrypted \[(.*)\] (\d+)", printed)
    assert [int(v) for v in decrypted.group(1).split(",")] == [0, 1, 4, 9]  # xs * xs
    budget = int(decrypted.group(2))
    assert text.count(f"ct0: level 2, noise budget {budget} bits") == 2  # before and after
    assert "part c0 is not written yet" in text
    assert re.search(r"slots\[:4\]\s+0\s+1\s+4\s+9\b", text)
    assert f"precision: {math.log2(T):.2f} bits" in text
