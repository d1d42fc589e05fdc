"""``compile_cached``: built once, kept in memory and on disk, damaged entries rebuilt, races safe.

Oracles: counting the compiler's runs (``subprocess.run`` with an ``-o``), loading the library
with ctypes and calling it, and listing the cache directory. Every test uses its own
``REN_CACHE_DIR`` and an empty in-memory table, so nothing leaks between tests or into the
user's cache.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ren.codegen import compiler
from ren.codegen.compiler import CompileError, compile_cached, find_compiler

pytestmark = pytest.mark.cc

FLAGS = ("-O1", "-shared", "-fPIC")
REPO = Path(__file__).resolve().parents[2]


def source(answer: int = 42) -> str:
    return f"int ren_test_answer(void) {{ return {answer}; }}\n"


def call(lib: Path) -> int:
    """Load ``lib`` and call its ``ren_test_answer``."""
    return ctypes.CDLL(str(lib)).ren_test_answer()


def entries(directory: Path) -> list[str]:
    """Everything in ``directory`` (hidden build directories included), sorted."""
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh cache directory and an empty in-memory table for each test."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("REN_CACHE_DIR", str(directory))
    monkeypatch.delenv("REN_CCACHE", raising=False)
    monkeypatch.delenv("REN_DEBUG", raising=False)
    monkeypatch.setattr(compiler, "_memory", {})
    return directory


@pytest.fixture
def builds(monkeypatch) -> list[list[str]]:
    """The compiler command lines run from now on (``subprocess.run`` calls that write ``-o``)."""
    runs: list[list[str]] = []
    real = subprocess.run

    def counting(cmd, *args, **kwargs):
        if "-o" in cmd:
            runs.append(list(cmd))
        return real(cmd, *args, **kwargs)

    find_compiler()  # looked up (and cached) before counting starts
    monkeypatch.setattr(subprocess, "run", counting)
    return runs


# --------------------------------------------------------------------------------------------
# memory and disk


def test_builds_once_then_hits_memory(cache, builds):
    lib = compile_cached(source(), FLAGS, name="ren_once")
    assert len(builds) == 1 and lib.parent == cache and lib.name.startswith("ren_once-")
    assert compile_cached(source(), FLAGS, name="ren_once") == lib
    assert len(builds) == 1
    assert call(lib) == 42
    assert entries(cache) == [lib.name, lib.with_suffix(".sum").name]


def test_the_sum_file_holds_size_and_sha256(cache):
    lib = compile_cached(source(), FLAGS)
    data = lib.read_bytes()
    want = f"{len(data)} {hashlib.sha256(data).hexdigest()}"
    assert lib.with_suffix(".sum").read_text().strip() == want


def test_cleared_memory_hits_the_disk_entry_without_compiling(cache, builds):
    lib = compile_cached(source(), FLAGS)
    compiler._memory.clear()  # what a new process starts with
    assert compile_cached(source(), FLAGS) == lib
    assert len(builds) == 1
    assert call(lib) == 42


def test_an_entry_deleted_behind_the_memory_table_is_rebuilt(cache, builds):
    lib = compile_cached(source(), FLAGS)
    lib.unlink()
    lib.with_suffix(".sum").unlink()
    assert compile_cached(source(), FLAGS) == lib
    assert len(builds) == 2 and call(lib) == 42


def test_different_flags_source_or_renderer_version_make_different_entries(
    cache, builds, monkeypatch
):
    base = compile_cached(source(), FLAGS)
    other_flags = compile_cached(source(), ("-O2", "-shared", "-fPIC"))
    other_source = compile_cached(source(7), FLAGS)
    monkeypatch.setattr(compiler, "RENDERER_VERSION", compiler.RENDERER_VERSION + 1)
    other_version = compile_cached(source(), FLAGS)
    libs = [base, other_flags, other_source, other_version]
    assert len(set(libs)) == 4 and len(builds) == 4
    assert [call(lib) for lib in libs] == [42, 42, 7, 42]
    assert ["-O2" in cmd for cmd in builds] == [False, True, False, False]


def test_ren_ccache_0_never_writes_to_the_cache_dir(cache, builds, monkeypatch, tmp_path):
    monkeypatch.setenv("REN_CCACHE", "0")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    compiler._scratch_dir.cache_clear()  # this process's scratch folder, made under ``scratch``
    lib = compile_cached(source(), FLAGS)
    assert call(lib) == 42 and lib.parent.parent == scratch
    assert compile_cached(source(), FLAGS) == lib  # the memory table still works
    compiler._memory.clear()  # a new process builds again, in a scratch folder of its own
    compiler._scratch_dir.cache_clear()
    again = compile_cached(source(), FLAGS)
    assert len(builds) == 2 and again != lib and again.is_file()
    assert not cache.exists()


# --------------------------------------------------------------------------------------------
# damaged entries


def flip_middle(lib: Path) -> None:
    data = bytearray(lib.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 16] = bytes(b ^ 0xFF for b in data[mid : mid + 16])
    lib.write_bytes(bytes(data))  # same size, other bytes


DAMAGE = {
    "corrupt": flip_middle,
    "truncated": lambda lib: os.truncate(lib, lib.stat().st_size // 2),
    "empty": lambda lib: os.truncate(lib, 0),
    "missing_sum": lambda lib: lib.with_suffix(".sum").unlink(),
    "garbage_sum": lambda lib: lib.with_suffix(".sum").write_text("12 not-a-checksum\n"),
    "missing_lib": lambda lib: lib.unlink(),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_disk_entry_is_detected_and_rebuilt(cache, builds, damage):
    # never loaded before it is damaged: a damaged file that a process has mapped may crash it
    lib = compile_cached(source(), FLAGS)
    good = compiler._checksum(lib)
    DAMAGE[damage](lib)
    assert not compiler._valid(lib)
    compiler._memory.clear()
    assert compile_cached(source(), FLAGS) == lib
    assert len(builds) == 2
    assert compiler._checksum(lib) == good  # the same build again, with its sum
    assert lib.with_suffix(".sum").read_text().strip() == good
    assert call(lib) == 42
    assert entries(cache) == [lib.name, lib.with_suffix(".sum").name]


# --------------------------------------------------------------------------------------------
# several processes

_CHILD = """
import ctypes, subprocess, sys, time
from pathlib import Path
from ren.codegen.compiler import compile_cached

source, go, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if mode == "no-compiler":  # only a disk hit can succeed
    real = subprocess.run
    def refuse(cmd, *args, **kwargs):
        if "-o" in cmd:
            raise AssertionError("compiled although the entry is on disk")
        return real(cmd, *args, **kwargs)
    subprocess.run = refuse
deadline = time.monotonic() + 30
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.001)
lib = compile_cached(source, ("-O2", "-shared", "-fPIC"), name="ren_race")
print(ctypes.CDLL(str(lib)).ren_test_answer(), lib)
"""


def spawn(cache: Path, src: str, go: Path, mode: str = "build") -> subprocess.Popen:
    path = os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "REN_CACHE_DIR": str(cache), "PYTHONPATH": path}
    env.pop("REN_CCACHE", None)
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, src, str(go), mode],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_builds_of_one_source_all_succeed_and_leave_no_temp_files(cache, tmp_path):
    # a source that takes a moment to compile, so the four builds overlap
    body = "\n".join(f"static int f{i}(int x) {{ return x * {i} + {i % 7}; }}" for i in range(400))
    total = " + ".join(f"f{i}(1)" for i in range(400))
    src = f"{body}\nint ren_test_answer(void) {{ return ({total}) % 1000; }}\n"
    want = sum(i + i % 7 for i in range(400)) % 1000
    go = tmp_path / "go"
    procs = [spawn(cache, src, go) for _ in range(4)]
    time.sleep(0.3)  # let them start up and wait at the gate
    go.touch()
    results = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert out.split()[0] == str(want)
    libs = {out.split()[1] for out, _ in results}
    assert len(libs) == 1
    lib = Path(libs.pop())
    assert entries(cache) == [lib.name, lib.with_suffix(".sum").name]  # no .build-* left
    assert compiler._valid(lib)
    # a new process finds the entry on disk and never runs the compiler
    late = spawn(cache, src, go, mode="no-compiler")
    out, err = late.communicate(timeout=60)
    assert late.returncode == 0, err
    assert out.split() == [str(want), str(lib)]


# --------------------------------------------------------------------------------------------
# errors and debugging


def test_a_compiler_failure_names_the_error_and_keeps_the_source(cache):
    bad = "int ren_test_answer(void) { return ren_no_such_name; }\n"
    with pytest.raises(CompileError) as info:
        compile_cached(bad, FLAGS, name="ren_bad")
    msg = str(info.value)
    assert "ren_no_such_name" in msg and "error" in msg  # the compiler's own text
    assert "failed on ren_bad" in msg
    match = re.search(r"source kept at (\S+\.failed\.c)", msg)
    assert match, msg
    kept = Path(match.group(1))
    assert kept.is_file() and kept.read_text() == bad
    # nothing else was left: no library, no sum, no build directory
    assert entries(cache) == [kept.name]


def test_a_missing_compiler_says_what_to_install(tmp_path):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    find_compiler.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setenv("PATH", str(empty))
            m.delenv("CC", raising=False)
            with pytest.raises(CompileError, match=r"no C compiler found.*install gcc"):
                compile_cached(source(), FLAGS)
            with pytest.raises(CompileError, match="no C compiler found"):
                find_compiler("ren-no-such-cc")
    finally:
        find_compiler.cache_clear()
    assert Path(find_compiler()[0]).is_file()  # found again once PATH is back


def test_ren_debug_4_prints_the_source_when_building(monkeypatch, capsys):
    compile_cached(source(3), FLAGS, name="ren_quiet")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("REN_DEBUG", "4")
    compile_cached(source(4), FLAGS, name="ren_loud")
    err = capsys.readouterr().err
    assert err.startswith("// ren_loud (") and source(4) in err
    assert " ".join(FLAGS) in err.splitlines()[0]
    compile_cached(source(4), FLAGS, name="ren_loud")  # a cache hit builds nothing, prints nothing
    assert capsys.readouterr().err == ""
