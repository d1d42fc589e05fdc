"""The conformance kit (``ren.testing``) finds what is wrong with a backend, and only that.

Oracles: the python backend passes against itself; the cpu backend passes (it is checked word by
word elsewhere); a backend that is wrong in one known word of one kernel family fails exactly the
cases whose programs run that family, naming that word; the kit's inputs and random programs are
checked against the big-integer reference (``ren.reference``). The example backend of
``docs/backends.md`` runs and passes the kit.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ren import Poly, RingSpec, ntt_primes
from ren import device as ren_device
from ren.backends import python as python_backend
from ren.errors import RenError
from ren.reference import evaluate
from ren.testing import (
    FAMILIES,
    DeviceUnavailable,
    cases,
    compare,
    edge_patterns,
    main,
    random_program,
    run_conformance,
    stored_words,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "backends.md"
SMALL = RingSpec(8, ntt_primes(8, 30, 3))


@pytest.fixture
def register():
    """``register(name, backend)``; the names are forgotten after the test (Ren has no public
    ``unregister_device``, so this reaches into the registry)."""
    names: list[str] = []

    def _register(name: str, backend: object) -> str:
        ren_device.register_device(name, backend)
        names.append(name)
        return name

    yield _register
    for name in names:
        ren_device.unregister_device(name)


class OffByOne:
    """The python backend, except that kernels of kind ``kind`` add 1 (mod q_0) to word 1."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def compile(self, ast, info):
        run = python_backend.compile(ast, info)
        if info.kind != self.kind:
            return run
        q = info.ring.moduli[0]

        def wrong(bufs):
            run(bufs)
            out = bufs[0].array
            out[1] = (int(out[1]) + 1) % q

        return wrong


class Raises:
    """A backend whose ``compile`` raises ``error`` for kernels of kind ``kind`` (any: None)."""

    def __init__(self, error: Exception, kind: str | None = None) -> None:
        self.error, self.kind = error, kind

    def compile(self, ast, info):
        if self.kind is None or info.kind == self.kind:
            raise self.error
        return python_backend.compile(ast, info)


# --- the suite itself --------------------------------------------------------------------------


def test_every_family_has_cases_on_every_quick_ring():
    todo = cases(quick=True)
    assert [f for f in FAMILIES if any(c.family == f for c in todo)] == list(FAMILIES)
    rings = {c.ring for c in todo if c.family == "ntt"}
    assert {(r.n, r.dtype) for r in rings} == {(8, "u32"), (64, "u64")}
    keys = [(c.family, c.name, c.ring) for c in todo]
    assert len(keys) == len(set(keys))  # names are unique per family and ring


def test_full_suite_covers_sizes_dtypes_and_limb_counts():
    todo = cases(["ntt"])
    rings = {c.ring for c in todo}
    assert {r.n for r in rings} == {2, 8, 64, 1024, 4096}
    for dtype in ("u32", "u64"):
        assert {r.L for r in rings if r.dtype == dtype} == {1, 2, 3, 4}
    edge = {c.ring for c in cases(["edge"], quick=True)}
    assert any(max(r.moduli).bit_length() == 62 for r in edge)  # the largest u64 moduli


def test_unknown_family_is_a_value_error():
    with pytest.raises(ValueError, match="unknown family 'fft'; the families are elementwise"):
        cases(["fft"])


def test_python_passes_against_itself():
    report = run_conformance("python", quick=True, families=["elementwise", "rescale"])
    assert report.ok
    assert set(report.families) == {"elementwise", "rescale"}
    assert report.families["rescale"].total == len(cases(["rescale"], quick=True))


@pytest.mark.cc
def test_cpu_passes_the_quick_suite():
    report = run_conformance("cpu", quick=True)
    assert report.ok, report.table()
    assert len(report.results) == len(cases(quick=True))
    ran = {k for r in report.results for k in r.kernels}
    assert ran == {"elementwise", "ntt", "intt", "rescale", "base_convert", "copy"}


# --- a wrong backend ---------------------------------------------------------------------------


def test_a_wrong_ntt_fails_exactly_the_cases_that_run_an_ntt(register):
    name = register("wrong_ntt", OffByOne("ntt"))
    report = run_conformance(name, quick=True)
    failed = {(r.family, r.name, r.ring) for r in report.failures}
    runs_ntt = {(r.family, r.name, r.ring) for r in report.results if "ntt" in r.kernels}
    assert failed == runs_ntt
    stats = report.families
    assert stats["ntt"].failed == stats["ntt"].total > 0
    for family in ("elementwise", "intt", "basis", "copy"):
        assert stats[family].failed == 0, family
    assert stats["automorphism"].passed > 0  # the NTT-form rotations need no NTT
    forward = next(r for r in report.failures if r.name == "forward")
    assert re.match(
        r"a\.ntt\(\): limb 0, slot 1 \(ntt form, q=\d+\): got word \d+", forward.message
    )
    assert "REN_VALIDATE: kernel ntt_n" in forward.message  # the kernel, pinned down
    assert "at word 1 (limb 0, slot 1)" in forward.message
    table = report.table()
    assert "FAILED" in table and "[ntt] forward (n=8 L=3 u32 30-bit)" in table


def test_the_command_exits_1_on_a_failure(register, capsys):
    name = register("wrong_rescale", OffByOne("rescale"))
    assert main(["--device", name, "--quick", "--family", "rescale", "copy"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^rescale\s+0\s+12\s+12\s", out, re.MULTILINE)
    assert re.search(r"^copy\s+8\s+0\s+8\s", out, re.MULTILINE)
    assert "limb 0, slot 1 (coeff form" in out


def test_a_compile_that_raises_is_reported_not_a_crash(register, tmp_path):
    name = register("no_ntt", Raises(NotImplementedError("no NTT here"), "ntt"))
    path = tmp_path / "report.json"
    assert main(["--device", name, "--quick", "--family", "ntt", "--json", str(path)]) == 1
    data = json.loads(path.read_text())
    assert data["ok"] is False and data["families"]["ntt"]["failed"] == 8
    message = data["cases"][0]["message"]
    assert message.startswith("NotImplementedError: no NTT here (raised at ")
    assert "test_testing.py" in message  # where it was raised


def test_a_backend_that_always_raises_fails_every_case(register):
    name = register("broken", Raises(RuntimeError("boom")))
    report = run_conformance(name, quick=True, families=["elementwise", "copy"])
    assert report.results and not any(r.passed for r in report.results)
    assert all(r.message.startswith("RuntimeError: boom") for r in report.results)


# --- devices that cannot run -------------------------------------------------------------------


def test_an_unknown_device_exits_2_listing_the_devices(capsys):
    assert main(["--device", "tpu", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "unknown device 'tpu'; the devices are python, cpu, cuda" in err


@pytest.mark.parametrize(
    "error",
    [RenError("PyCUDA is not installed: pip install ren[cuda]"), ModuleNotFoundError("pycuda")],
    ids=["RenError", "ImportError"],
)
def test_a_device_that_cannot_start_exits_2_with_its_message(register, capsys, error):
    name = register("nodriver", Raises(error))
    with pytest.raises(DeviceUnavailable, match="device 'nodriver' cannot run kernels"):
        run_conformance(name, quick=True)
    assert main(["--device", name, "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ren.testing: device 'nodriver' cannot run kernels: ")
    assert str(error) in err


@pytest.mark.skipif(
    importlib.util.find_spec("pycuda") is not None, reason="PyCUDA is installed here"
)
def test_cuda_without_pycuda_exits_2_with_the_install_hint():
    env = {k: v for k, v in os.environ.items() if k != "REN_CUDA_EMULATE"}
    cmd = [sys.executable, "-m", "ren.testing", "--device", "cuda", "--quick"]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("ren.testing: device 'cuda' cannot run kernels: RenError: ")
    assert "pip install" in result.stderr and "Traceback" not in result.stderr


def test_list_prints_the_families(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == list(FAMILIES)


def test_no_device_exits_2(capsys):
    assert main([]) == 2
    assert "--device is required" in capsys.readouterr().err


@pytest.mark.cc
def test_python_m_ren_testing_on_cpu(tmp_path):
    path = tmp_path / "cpu.json"
    cmd = [sys.executable, "-m", "ren.testing", "--device", "cpu", "--quick", "--json", str(path)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Ren conformance: device 'cpu' against 'python' (quick: 3 rings, seed 0)"
    assert lines[2].split()[:4] == ["family", "passed", "failed", "total"]
    rows = {line.split()[0]: line.split()[1:4] for line in lines[3:13]}
    assert list(rows) == [*FAMILIES, "all"]
    assert all(failed == "0" and passed == total for passed, failed, total in rows.values())
    assert lines[-1].startswith("OK: all ")
    assert json.loads(path.read_text())["ok"] is True


# --- the pieces, against the big-integer reference ---------------------------------------------


def test_compare_names_the_first_differing_limb_and_slot():
    a = Poly(list(range(8)), SMALL)
    b = Poly([*range(5), 99, 6, 7], SMALL)
    assert compare("a", a, a) is None
    message = compare("x", a, b)
    assert message.startswith(f"x: limb 0, slot 5 (coeff form, q={SMALL.moduli[0]}): got word ")
    assert message.endswith("; 3 of 24 words differ")  # coefficient 5 in each of the 3 limbs
    assert "ntt form but the reference is in coeff form" in compare("y", a.ntt(), a)


def test_edge_patterns_are_the_residues_they_claim():
    patterns = edge_patterns(SMALL)
    q = np.array(SMALL.moduli, dtype=np.uint64)[:, None]
    assert (patterns["q-1"] == q - 1).all()
    assert (patterns["q//2"] == q // 2).all() and (patterns["(q+1)/2"] == q // 2 + 1).all()
    for name, residues in patterns.items():
        assert (residues < q).all(), name
    R = 1 << SMALL.word_bits
    top = [int(r) * R % m for r, m in zip(patterns["top words"][:, 0], SMALL.moduli, strict=True)]
    assert top == [m - 1 for m in SMALL.moduli]  # the largest Montgomery word


@pytest.mark.parametrize("form", ["coeff", "ntt"])
def test_pattern_inputs_hold_exactly_the_pattern(form):
    from ren.testing.rings import Inputs

    residues = edge_patterns(SMALL, seed=3)["mixed"]
    inputs = Inputs(SMALL, 0, "python")
    p = inputs.from_residues(residues) if form == "coeff" else inputs.from_slots(residues)
    assert p.domain.value == form
    assert (p.limbs() == residues).all()


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_equal_the_reference(seed):
    ring = RingSpec(8, ntt_primes(8, 30, 3))
    outs, text = random_program(ring, "python", seed, max_ops=12)
    again, text_again = random_program(ring, "python", seed, max_ops=12)
    assert text == text_again and [n for n, _ in outs] == [n for n, _ in again]
    assert 5 <= text.count("=") - 3 <= 12  # three inputs, then 5 to 12 ops
    want = [evaluate(p.node) for _, p in outs]
    assert [p.tolist() for _, p in outs] == want
    assert stored_words(outs[0][1]).shape == (outs[0][1].ring.L, 8)


# --- the examples of docs/backends.md ------------------------------------------------------------


def page_blocks() -> list[tuple[str, str]]:
    """The page's fenced blocks, in order: ``(language, body)``."""
    return re.findall(r"```(\w+)\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


def console(command: str) -> list[str]:
    """The lines a ```` ```console ```` block shows after ``$ command``."""
    for lang, body in page_blocks():
        if lang == "console" and body.startswith(f"$ {command}\n"):
            return body.splitlines()[1:]
    raise AssertionError(f"docs/backends.md shows no `$ {command}`")


def without_seconds(line: str) -> str:
    return re.sub(r"\s\d+\.\d\d(?=\s|$)", " S", line)


@pytest.fixture
def page_modules(tmp_path, monkeypatch):
    """The page's python blocks: ``tinyc.py``, its use, ``mydev.py``; the two modules saved where
    ``import`` finds them, and forgotten afterwards."""
    module, use, mydev = [body for lang, body in page_blocks() if lang == "python"]
    (tmp_path / "tinyc.py").write_text(module, encoding="utf-8")
    (tmp_path / "mydev.py").write_text(mydev, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield use
    for name in ("tinyc", "mydev"):
        sys.modules.pop(name, None)


@pytest.mark.cc
def test_the_example_backend_runs_and_passes_the_kit(register, page_modules, capsys):
    blocks = page_blocks()
    printed = blocks[[body for _, body in blocks].index(page_modules) + 1]
    assert printed[0] == "text"
    exec(compile(page_modules, str(PAGE), "exec"), {})  # imports tinyc: registers it
    register("tinyc", ren_device.registered_backend("tinyc"))  # forgotten after the test
    assert capsys.readouterr().out == printed[1]
    report = run_conformance("tinyc", quick=True, rings=[SMALL])
    assert report.ok, report.table()
    assert list(report.families) == list(FAMILIES)


def test_the_pages_quick_table_has_the_suites_counts():
    shown = console("python -m ren.testing --import tinyc --device tinyc --quick")
    rows = {line.split()[0]: line.split()[1:4] for line in shown[3:13]}
    counts = {f: sum(c.family == f for c in cases(quick=True)) for f in FAMILIES}
    counts["all"] = sum(counts.values())
    assert rows == {f: [str(k), "0", str(k)] for f, k in counts.items()}


def test_the_pages_failure_report_is_what_the_kit_prints(register, page_modules, capsys):
    command = "python -m ren.testing --import mydev --device mydev --quick --family ntt intt"
    shown = console(command)
    assert shown[-1] == "..."
    assert main(command.split()[3:]) == 1
    register("mydev", ren_device.registered_backend("mydev"))  # forgotten after the test
    printed = capsys.readouterr().out.splitlines()
    assert [without_seconds(x) for x in printed[: len(shown) - 1]] == [
        without_seconds(x) for x in shown[:-1]
    ]


def test_the_docs_page_is_a_guide():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").splitlines()
    guides = nav.index("  - Guides:")
    at = next(i for i, line in enumerate(nav) if line.endswith(": backends.md"))
    assert nav[at].strip() == "- Writing a backend: backends.md"
    assert guides < at < nav.index("  - Reference:")


def test_a_report_shows_its_families_and_failures_in_a_notebook():
    """The HTML display against a report made by hand: counts per family, verdict, failures."""
    from ren.testing.run import CaseResult, Report

    results = [
        CaseResult("ntt", "ntt-1", "n=8", True, 0.5, kernels=("ntt",)),
        CaseResult("ntt", "ntt-2", "n=8", False, 0.25, "word 3: 7 != 8 <bad>", ("ntt",)),
        CaseResult("intt", "intt-1", "n=8", True, 1.0, kernels=("intt",)),
    ]
    shown = Report("mydev", seed=4, quick=True, results=results)._repr_html_()
    rows = re.findall(r"<tr>(.*?)</tr>", shown)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert ["ntt", "1", "1", "2", "0.75", "ntt"] in cells
    assert ["intt", "1", "0", "1", "1.00", "intt"] in cells
    assert "FAILED: 1 of 3 cases" in shown and "word 3: 7 != 8 &lt;bad&gt;" in shown
    assert "<bad>" not in shown and "<script" not in shown
    ok = Report("mydev", results=results[:1])._repr_html_()
    assert "OK: all 1 cases match" in ok and "<pre>" not in ok
