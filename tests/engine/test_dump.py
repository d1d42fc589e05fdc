"""The dump hook: where files go (context over env, nesting), what they hold, and SVG or not."""

import os
import re
import stat
import warnings

import pytest

from ren.engine import dump
from ren.engine.dump import dump_dir, dump_input, dump_pass
from ren.ir.dot import to_dot
from ren.poly import Poly
from ren.ring import RingSpec
from ren.viz import dump_to

RING = RingSpec(8, (17, 97))


def before_after():
    """A graph and the graph a pretend pass made from it: ``a + b`` and ``(a + b) * 3``."""
    a, b = Poly([1] * 8, RING), Poly([2] * 8, RING)
    before = a + b
    after = before * 3
    return before.node, after.node


@pytest.fixture
def no_dot(monkeypatch):
    """Graphviz's ``dot`` is not on PATH."""
    monkeypatch.setattr(dump.shutil, "which", lambda name: None)


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("REN_DUMP", raising=False)


def files(directory):
    return sorted(p.name for p in directory.iterdir())


def test_env_dir_gets_input_and_pass_files(tmp_path, monkeypatch, no_dot):
    out = tmp_path / "made" / "by" / "dump"  # created on demand
    monkeypatch.setenv("REN_DUMP", str(out))
    before, after = before_after()
    assert dump_dir() == out
    dump_input(before)
    dump_pass(1, "simplify", after, before)
    assert files(out) == ["00_input.dot", "01_simplify.dot"]
    assert (out / "00_input.dot").read_text() == to_dot(before, title="input")
    # the MUL, the constant 3 and its AS_RING are new; a + b and below are not
    created = {after, after.src[1], after.src[1].src[0]}
    expected = to_dot(after, created=created, title="simplify")
    assert (out / "01_simplify.dot").read_text() == expected
    assert expected.count("penwidth=3") == 3


def test_pass_without_previous_highlights_nothing(tmp_path, no_dot):
    _, after = before_after()
    with dump_to(tmp_path):
        dump_pass(12, "kernelize", after, None)
    assert files(tmp_path) == ["12_kernelize.dot"]
    assert "penwidth" not in (tmp_path / "12_kernelize.dot").read_text()


def test_context_wins_over_env_and_nesting_restores(tmp_path, monkeypatch, no_dot):
    env, outer, inner = tmp_path / "env", tmp_path / "outer", tmp_path / "inner"
    monkeypatch.setenv("REN_DUMP", str(env))
    before, after = before_after()
    with dump_to(str(outer)) as path:
        assert path == outer and dump_dir() == outer
        with dump_to(inner):
            assert dump_dir() == inner
            dump_pass(2, "inner", after, before)
        assert dump_dir() == outer
        dump_pass(1, "outer", after, before)
    assert dump_dir() == env
    assert files(inner) == ["02_inner.dot"]
    assert files(outer) == ["01_outer.dot"]
    assert not env.exists()


def test_context_is_restored_when_the_block_raises(tmp_path, no_env):
    with pytest.raises(KeyError), dump_to(tmp_path):
        raise KeyError
    assert dump_dir() is None


def test_nothing_is_written_when_no_dir_is_active(tmp_path, monkeypatch, no_env):
    monkeypatch.chdir(tmp_path)
    before, after = before_after()
    assert dump_dir() is None
    dump_input(before)
    dump_pass(1, "simplify", after, before)
    assert files(tmp_path) == []


def test_empty_env_is_off(tmp_path, monkeypatch):
    monkeypatch.setenv("REN_DUMP", "")
    assert dump_dir() is None


@pytest.mark.graphviz
def test_svg_is_drawn_when_graphviz_is_present(tmp_path):
    before, after = before_after()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with dump_to(tmp_path):
            dump_input(before)
            dump_pass(1, "simplify", after, before)
    assert files(tmp_path) == ["00_input.dot", "00_input.svg", "01_simplify.dot", "01_simplify.svg"]
    for name in ("00_input.svg", "01_simplify.svg"):
        head = (tmp_path / name).read_text().lstrip()
        assert head.startswith(("<?xml", "<svg"))


def test_without_dot_on_path_only_dot_files_are_written(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    before, after = before_after()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing dot is normal: no warning
        with dump_to(tmp_path / "out"):
            dump_input(before)
            dump_pass(1, "simplify", after, before)
    assert files(tmp_path / "out") == ["00_input.dot", "01_simplify.dot"]


def fake_dot(directory, body):
    directory.mkdir()
    exe = directory / "dot"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return directory


@pytest.mark.parametrize(
    "body, why",
    [("echo 'syntax error' >&2; exit 3", "exited with 3: syntax error"), ("exec sleep 5", "took")],
    ids=["dot-fails", "dot-hangs"],
)
def test_a_failing_dot_warns_once_and_keeps_the_dot_file(tmp_path, monkeypatch, body, why):
    bindir = fake_dot(tmp_path / "bin", body)
    monkeypatch.setenv("PATH", str(bindir) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setattr(dump, "SVG_TIMEOUT_S", 0.5)
    monkeypatch.setattr(dump, "_warned", False)
    before, after = before_after()
    out = tmp_path / "out"
    with dump_to(out), pytest.warns(RuntimeWarning, match=why) as caught:
        dump_input(before)
        dump_pass(1, "simplify", after, before)
    assert len(caught) == 1  # once, not once per pass
    assert "00_input.dot" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller of the hook
    assert files(out) == ["00_input.dot", "01_simplify.dot"]
    assert (out / "01_simplify.dot").read_text() == to_dot(
        after, created={after, after.src[1], after.src[1].src[0]}, title="simplify"
    )


# -- a directory that cannot hold the dumps ---------------------------------------------------


def read_only(monkeypatch, directory):
    """Writing under ``directory`` fails as on a read-only file system (chmod does not stop root,
    who runs these tests in some containers, so the refusal is simulated)."""
    real = dump.Path.write_text

    def refuse(self, *args, **kwargs):
        if directory in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(dump.Path, "write_text", refuse)


BAD_DUMP_DIRS = {
    "under-a-file": (lambda tmp: tmp / "file" / "dumps", "NotADirectoryError"),
    "a-regular-file": (lambda tmp: tmp / "file", "exists and is not a directory"),
    "deep-under-a-file": (lambda tmp: tmp / "file" / "a" / "b", "NotADirectoryError"),
    "read-only": (lambda tmp: tmp / "ro", "PermissionError: Permission denied"),
}


@pytest.mark.parametrize("case", list(BAD_DUMP_DIRS))
def test_a_bad_ren_dump_path_is_a_value_error_naming_it(tmp_path, monkeypatch, no_dot, case):
    (tmp_path / "file").write_text("not a directory\n")
    make, why = BAD_DUMP_DIRS[case]
    bad = make(tmp_path)
    if case == "read-only":
        read_only(monkeypatch, bad)
    monkeypatch.setenv("REN_DUMP", str(bad))
    before, after = before_after()
    with pytest.raises(ValueError, match=rf"REN_DUMP='{re.escape(str(bad))}' cannot hold") as e:
        dump_input(before)
    assert why in str(e.value)
    with pytest.raises(ValueError, match="REN_DUMP"):
        dump_pass(1, "simplify", after, before)
    assert (tmp_path / "file").read_text() == "not a directory\n"  # left as it was


def test_a_bad_dump_to_directory_is_named_as_such(tmp_path, no_env, no_dot):
    (tmp_path / "file").write_text("")
    before, _ = before_after()
    with dump_to(tmp_path / "file" / "dumps"), pytest.raises(ValueError) as e:
        dump_input(before)
    assert str(e.value).startswith(f"the dump_to directory '{tmp_path / 'file' / 'dumps'}'")
    assert "NotADirectoryError" in str(e.value)


def test_a_bad_ren_dump_stops_a_realization_before_any_pass(tmp_path, monkeypatch, no_dot):
    (tmp_path / "file").write_text("")
    words = [1, 2, 3, 4, 5, 6, 7, 8]
    y = Poly(words, RING) * Poly(words, RING)
    monkeypatch.setenv("REN_DUMP", str(tmp_path / "file" / "dumps"))
    with pytest.raises(ValueError, match="REN_DUMP="):
        y.realize()
    assert not y.realized
    monkeypatch.delenv("REN_DUMP")  # fixed: the same program runs
    n, q = RING.n, RING.Q
    full = [0] * (2 * n)
    for i in range(n):
        for j in range(n):
            full[i + j] += words[i] * words[j]
    assert y.tolist() == [(full[k] - full[k + n]) % q for k in range(n)]  # x^n = -1
