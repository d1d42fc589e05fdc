"""ren.dist on Ray, for real: a local cluster of two CPUs, each test's workers Ray actors.

The oracle is the same as the local engine's (``ren.load`` in this process, word for word), and
the transfers are counted where they happen: every ``ray.put`` the engine makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ren import dist
from tests.dist import checks, plans

ray = pytest.importorskip("ray", reason="needs Ray: pip install -e .[dev] (the ray pin)")

pytestmark = pytest.mark.cc

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    """A local Ray of two CPUs for this module; the workers import the test devices from here."""
    if ray.is_initialized():
        ray.shutdown()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=200 * 1024 * 1024,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    yield
    ray.shutdown()


def test_results_equal_an_in_process_replay(cpu: plans.Setup) -> None:
    checks.results_equal_in_process_replay(cpu, "ray")


def test_bad_items_are_reported_and_the_batch_goes_on(cpu: plans.Setup) -> None:
    checks.bad_items_are_reported_and_the_batch_goes_on(cpu, "ray")


def test_a_killed_worker_s_items_are_retried_once_then_reported(dying: plans.Setup) -> None:
    checks.a_killed_worker_s_items_are_retried_once_then_reported(dying, "ray")


def test_audit_catches_a_wrong_result(faulty: plans.Setup) -> None:
    checks.audit_catches_a_wrong_result(faulty, "ray")


def test_keys_are_put_once_and_read_without_a_copy(
    cpu: plans.Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    puts: list[int] = []
    real = ray.put

    def counted(value: object, **kw: object) -> object:
        puts.append(getattr(value, "nbytes", -1))
        return real(value, **kw)

    monkeypatch.setattr(ray, "put", counted)
    keys = cpu.keys.to_bytes()
    items = [cpu.item(i) for i in range(16)]
    with dist.Pool(cpu.plan, stored={"keys": cpu.keys}, engine="ray", workers=2) as pool:
        got = pool.map(items, batch_size=2, progress=False)
        info = pool.workers_info
    assert got == [cpu.expected(x) for x in items]
    # two puts for the whole run, whatever the items and workers: the plan, and the keys
    assert len(puts) == 2 and len(keys) in puts
    assert len({w["pid"] for w in info}) == 2
    assert all(w["keys_read_only"] for w in info)  # each actor reads the node's one copy
    assert all(w["keys_fingerprint"] == cpu.client.key_fingerprint for w in info)


def test_an_existing_ray_is_joined_not_restarted(cpu: plans.Setup) -> None:
    node = ray.get_runtime_context().get_node_id()
    dist.map(
        cpu.plan, [cpu.item(0)], stored={"keys": cpu.keys}, engine="ray", workers=1, progress=False
    )
    assert ray.is_initialized() and ray.get_runtime_context().get_node_id() == node


def test_a_cuda_plan_s_actors_ask_for_a_gpu() -> None:
    from ren.dist.on_ray import actor_options

    assert actor_options("cuda") == {"num_cpus": 1, "num_gpus": 1, "max_restarts": 0}
    assert actor_options("cpu") == {"num_cpus": 1, "num_gpus": 0, "max_restarts": 0}
