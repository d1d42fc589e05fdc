"""Each scheme's current contexts: one context variable per scheme, per thread, made in one place.

Oracle: the stacks seen in each thread against the ``with`` blocks that thread entered.
"""

from __future__ import annotations

import threading

from ren.schemes import bfv, bgv, ckks
from ren.schemes.ckks import active as ckks_active
from ren.schemes.rlwe.active import active_contexts, enter, leave
from tests.schemes.integer_cases import small


def test_one_variable_per_scheme_shared_by_the_schemes_contexts():
    assert active_contexts("ckks") is ckks_active.ACTIVE
    assert active_contexts("bfv") is bfv.Context._active
    assert active_contexts("bgv") is bgv.Context._active
    assert len({id(active_contexts(s)) for s in ("ckks", "bfv", "bgv")}) == 3


def test_many_threads_asking_for_a_new_scheme_get_one_variable():
    barrier = threading.Barrier(16)
    got = []

    def ask() -> None:
        barrier.wait()
        got.append(active_contexts("a-scheme-made-here"))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 16 and all(v is got[0] for v in got)


def test_enter_and_leave_take_the_innermost_occurrence():
    var = active_contexts("test-nesting")
    a, b = object(), object()
    enter(var, a)
    enter(var, b)
    enter(var, a)
    leave(var, a)
    assert var.get() == (a, b)
    leave(var, object())  # not there: nothing changes
    assert var.get() == (a, b)
    leave(var, a)
    leave(var, b)
    assert var.get() == ()


def test_a_with_block_in_one_thread_is_not_seen_in_another():
    params = ckks.Params(n=16, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
    ctx, ictx = ckks.Context(params, seed=1), bfv.Context(small(bfv), seed=1)
    seen = []
    with ctx, ictx:
        thread = threading.Thread(
            target=lambda: seen.append((ckks_active.ACTIVE.get(), bfv.Context._active.get()))
        )
        thread.start()
        thread.join()
        assert ckks.current() is ctx and bfv.Context._active.get() == (ictx,)
    assert seen == [((), ())]
    assert ckks_active.ACTIVE.get() == () and bfv.Context._active.get() == ()
