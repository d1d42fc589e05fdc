"""ren.dist on the ``local`` engine (processes of this machine): the oracle is ``ren.load`` here."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from ren import dist
from ren.capture.planfile import PlanFileError
from ren.errors import RenError
from tests.dist import checks, plans

pytestmark = pytest.mark.cc


def test_results_equal_an_in_process_replay(cpu: plans.Setup) -> None:
    checks.results_equal_in_process_replay(cpu, "local")


def test_a_plan_of_two_inputs_takes_tuples(folder: Path) -> None:
    setup = plans.make(folder, "cpu", plans.product)
    items = [(setup.item(i), setup.item(i + 10)) for i in range(5)]
    got = dist.map(
        setup.plan, items, stored={"keys": setup.keys}, engine="local", workers=2, progress=False
    )
    assert got == [setup.expected(x) for x in items]
    wrong = dist.map(
        setup.plan,
        [setup.item(0)],
        stored={"keys": setup.keys},
        engine="local",
        workers=1,
        progress=False,
    )
    assert isinstance(wrong[0], dist.ItemError) and wrong[0].kind == "value"
    assert "takes (a, b)" in wrong[0].reason


def test_bad_items_are_reported_and_the_batch_goes_on(cpu: plans.Setup) -> None:
    checks.bad_items_are_reported_and_the_batch_goes_on(cpu, "local")


def test_a_killed_worker_s_items_are_retried_once_then_reported(dying: plans.Setup) -> None:
    checks.a_killed_worker_s_items_are_retried_once_then_reported(dying, "local")


def test_audit_catches_a_wrong_result(faulty: plans.Setup) -> None:
    checks.audit_catches_a_wrong_result(faulty, "local")


def test_audit_passes_a_right_result(cpu: plans.Setup) -> None:
    checks.audit_passes_a_right_result(cpu, "local")


def test_the_driver_s_memory_does_not_grow_with_the_items(cpu: plans.Setup) -> None:
    item = cpu.item(0)
    peaks = {}
    with dist.Pool(cpu.plan, stored={"keys": cpu.keys}, engine="local", workers=2) as pool:
        for count in (60, 240):
            tracemalloc.start()
            done = 0
            for result in pool.imap(
                (bytes(bytearray(item)) for _ in range(count)), batch_size=2, progress=False
            ):
                assert isinstance(result, bytes)
                done += 1
            peaks[count] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert done == count
    # four times the items, not four times the memory: the window bounds what is held
    assert peaks[240] < 1.5 * peaks[60] + (1 << 20), peaks


def test_a_pool_runs_several_streams(cpu: plans.Setup) -> None:
    items = [cpu.item(i) for i in (1, 2, 3)]  # each encryption is a fresh draw: made once
    with dist.Pool(cpu.plan, stored={"keys": cpu.keys}, engine="local", workers=1) as pool:
        first = pool.map(items[:1], progress=False)
        second = pool.map(items[1:], progress=False)
    assert first + second == [cpu.expected(x) for x in items]


def test_bad_arguments_are_named(cpu: plans.Setup, tmp_path: Path) -> None:
    keys = {"keys": cpu.keys}
    run = dist.map
    checks.check_raises(
        ValueError, "engine must be one of", run, cpu.plan, [], stored=keys, engine="spark"
    )
    checks.check_raises(
        ValueError,
        "workers must be an int >= 1",
        run,
        cpu.plan,
        [],
        stored=keys,
        engine="local",
        workers=0,
    )
    checks.check_raises(ValueError, "needs the evaluation keys", run, cpu.plan, [], engine="local")
    checks.check_raises(
        ValueError,
        r"reads the stored inputs \['keys'\]",
        run,
        cpu.plan,
        [],
        stored={"evk": cpu.keys},
        engine="local",
    )
    checks.check_raises(
        TypeError,
        r"stored\['keys'\] must be ckks.EvaluationKeys",
        run,
        cpu.plan,
        [],
        stored={"keys": cpu.client},
        engine="local",
    )
    checks.check_raises(
        TypeError, "plan must be a saved plan's path", run, 3, [], stored=keys, engine="local"
    )
    (tmp_path / "not.renplan").write_text("{}")
    checks.check_raises(
        PlanFileError,
        "not a Ren plan file",
        run,
        tmp_path / "not.renplan",
        [],
        stored=keys,
        engine="local",
    )
    with dist.Pool(cpu.plan, stored=keys, engine="local", workers=1) as pool:
        checks.check_raises(ValueError, "audit must be an int >= 0", pool.map, [], audit=-1)
        checks.check_raises(
            ValueError, "batch_size must be an int >= 1", pool.map, [], batch_size=0
        )


def _refuse() -> None:
    raise RuntimeError("this worker is not set up here")


def test_a_worker_that_cannot_start_says_why(cpu: plans.Setup) -> None:
    with pytest.raises(RenError, match="could not start: RuntimeError: this worker is not set up"):
        dist.Pool(cpu.plan, stored={"keys": cpu.keys}, engine="local", workers=1, setup=_refuse)


def test_an_item_past_the_plan_s_size_is_refused_unsent(cpu: plans.Setup) -> None:
    huge = cpu.item(0) * 200
    got = dist.map(
        cpu.plan, [huge], stored={"keys": cpu.keys}, engine="local", workers=1, progress=False
    )
    assert isinstance(got[0], dist.ItemError) and "this plan's inputs take at most" in got[0].reason


def test_item_error_pickles_and_reads(cpu: plans.Setup) -> None:
    import pickle

    error = dist.ItemError(3, "input", "its checksum does not match")
    again = pickle.loads(pickle.dumps(error))
    assert (again.index, again.kind, again.reason) == (3, "input", "its checksum does not match")
    assert str(again) == "item 3 (input): its checksum does not match"


def test_the_progress_line_counts_items_and_errors(
    cpu: plans.Setup, capfd: pytest.CaptureFixture[str]
) -> None:
    items = [cpu.item(0), b"junk", cpu.item(1)]
    dist.map(cpu.plan, items, stored={"keys": cpu.keys}, engine="local", workers=1)
    err = capfd.readouterr().err
    assert "ren.dist: 3 items" in err and "items/s, 1 errors in" in err


def test_imap_starts_its_workers_before_it_returns(cpu: plans.Setup, tmp_path: Path) -> None:
    (tmp_path / "not.renplan").write_text("{}")
    with pytest.raises(PlanFileError):  # raised at the call, not at the first result
        dist.imap(tmp_path / "not.renplan", [], stored={"keys": cpu.keys}, engine="local")
    items = [cpu.item(i) for i in range(3)]
    stream = dist.imap(
        cpu.plan,
        iter(items),
        stored={"keys": cpu.keys},
        engine="local",
        workers=1,
        audit=2,
        progress=False,
    )
    assert list(stream) == [cpu.expected(x) for x in items]


def test_a_loaded_plan_is_taken_only_from_its_file(cpu: plans.Setup) -> None:
    import ren

    keys = {"keys": cpu.keys}
    with cpu.client:
        from_file = ren.load(cpu.plan, stored=keys)
        from_bytes = ren.load(cpu.plan.read_bytes(), stored=keys)
    got = dist.map(from_file, [cpu.item(0)], stored=keys, engine="local", workers=1, progress=False)
    assert isinstance(got[0], bytes)
    with pytest.raises(TypeError, match="read from bytes or moved"):
        dist.map(from_bytes, [], stored=keys, engine="local", workers=1)


def test_insecure_keys_as_bytes_need_the_opt_in(cpu: plans.Setup) -> None:
    blob = {"keys": cpu.keys.to_bytes()}
    with pytest.raises(ValueError, match=r"pass insecure=True to ren\.dist\.map"):
        dist.map(cpu.plan, [], stored=blob, engine="local", workers=1)
    assert dist.map(cpu.plan, [], stored=blob, engine="local", workers=1, insecure=True) == []


def test_a_script_without_the_main_guard_is_told_so(cpu: plans.Setup, tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "item").write_bytes(cpu.item(0))
    (tmp_path / "keys").write_bytes(cpu.keys.to_bytes())
    script = tmp_path / "unguarded.py"
    script.write_text(
        "from pathlib import Path\n"
        "from ren import dist\n"
        f"folder = Path({str(tmp_path)!r})\n"
        f"dist.map({str(cpu.plan)!r}, [(folder / 'item').read_bytes()], engine='local',\n"
        "         workers=1, stored={'keys': (folder / 'keys').read_bytes()}, insecure=True)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "RenError" in done.stderr and 'if __name__ == "__main__":' in done.stderr
