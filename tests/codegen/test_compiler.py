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
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pytest

from ren.codegen import cache_dirs, cache_entries, compiler, toolchain
from ren.codegen.compiler import CompileError, compile_cached, find_compiler
from tests.threads import in_threads

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
    """A fresh cache directory, empty in-memory tables and a fresh private directory (made under
    ``tmp_path / "tmp"``) for each test."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("REN_CACHE_DIR", str(directory))
    for name in ("REN_CCACHE", "REN_DEBUG", "REN_CACHE_MAX_MB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(compiler, "_memory", {})
    monkeypatch.setattr(cache_dirs, "_checked", {})
    monkeypatch.setattr(cache_dirs, "_warned", set())
    monkeypatch.setattr(cache_dirs, "_scratch", None)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return directory


@pytest.fixture
def private(tmp_path) -> Path:
    """Where this test's private directories are made (``tempfile.tempdir``)."""
    return tmp_path / "tmp"


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
    scratch = tmp_path / "tmp"  # the fixture makes private folders here
    lib = compile_cached(source(), FLAGS)
    assert call(lib) == 42 and lib.parent.parent == scratch
    assert compile_cached(source(), FLAGS) == lib  # the memory table still works
    compiler._memory.clear()  # a new process builds again, in a scratch folder of its own
    cache_dirs._scratch = None
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


def forge_sum(lib: Path) -> None:
    """A ``.sum`` that matches the (damaged) library: only the library's own checks are left."""
    lib.with_suffix(".sum").write_text(cache_entries.checksum(lib) + "\n")


def truncate_and_forge(lib: Path) -> None:
    os.truncate(lib, lib.stat().st_size // 2)
    forge_sum(lib)


def garbage_and_forge(lib: Path) -> None:
    lib.write_bytes(b"not a shared library\n" * 8)
    forge_sum(lib)


DAMAGE = {
    "corrupt": flip_middle,
    "truncated_with_a_matching_sum": truncate_and_forge,  # would end the process with SIGBUS
    "garbage_with_a_matching_sum": garbage_and_forge,
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
    good = cache_entries.checksum(lib)
    DAMAGE[damage](lib)
    assert not cache_entries.valid(lib)
    compiler._memory.clear()
    assert compile_cached(source(), FLAGS) == lib
    assert len(builds) == 2
    assert cache_entries.checksum(lib) == good  # the same build again, with its sum
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
    assert cache_entries.valid(lib)
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
    toolchain._find_compiler.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setenv("PATH", str(empty))
            m.delenv("CC", raising=False)
            with pytest.raises(CompileError, match=r"no C compiler found.*install gcc"):
                compile_cached(source(), FLAGS)
            with pytest.raises(CompileError, match="no C compiler found"):
                find_compiler("ren-no-such-cc")
    finally:
        toolchain._find_compiler.cache_clear()
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


# --------------------------------------------------------------------------------------------
# settings


@pytest.mark.parametrize("raw", ["0", "false", "no", "off", " OFF "])
def test_every_off_spelling_of_ren_ccache_keeps_the_disk_clean(cache, monkeypatch, private, raw):
    monkeypatch.setenv("REN_CCACHE", raw)  # "false" used to mean on
    lib = compile_cached(source(), FLAGS)
    assert call(lib) == 42 and private in lib.parents and not cache.exists()


@pytest.mark.parametrize(
    "name, raw",
    [
        ("REN_CCACHE", "maybe"),
        ("REN_CCACHE", "2"),
        ("REN_CACHE_MAX_MB", "0"),
        ("REN_CACHE_MAX_MB", "-1"),
        ("REN_CACHE_MAX_MB", "lots"),
        ("REN_DEBUG", "abc"),
    ],
)
def test_a_bad_setting_is_a_value_error_before_anything_is_built(
    cache, builds, monkeypatch, name, raw
):
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=rf"{name}='{raw}' is not accepted"):
        compile_cached(source(), FLAGS)
    assert builds == [] and not any(cache.glob("*.so"))


def test_without_ren_cache_dir_the_cache_is_under_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("REN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    lib = compile_cached(source(), FLAGS)
    assert lib.parent == tmp_path / "xdg" / "ren" and call(lib) == 42
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compiler.cache_dir() == tmp_path / "home" / ".cache" / "ren"


# --------------------------------------------------------------------------------------------
# a cache directory that cannot be used


def deny_mkdir_under(monkeypatch, parent: Path) -> None:
    """``Path.mkdir`` below ``parent`` fails as in a read-only directory (root, who may run these
    tests, is not stopped by chmod, so the refusal is simulated)."""
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if self == parent or parent in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)


def deny_writes_in(monkeypatch, directory: Path) -> None:
    """``os.access(directory, W_OK)`` is false, as for a read-only directory (simulated: see
    ``deny_mkdir_under``)."""
    real = os.access

    def access(path, mode, *args, **kwargs):
        if Path(path) == directory and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


#: case -> (the REN_CACHE_DIR under ``tmp_path``, how to make it unusable, what the warning says)
UNUSABLE = {
    "a-regular-file": ("file", None, "it exists and is not a directory"),
    "under-a-file": ("file/cache", None, "NotADirectoryError"),
    "deep-under-a-file": ("file/a/b/cache", None, "NotADirectoryError"),
    "parent-cannot-be-made": ("locked/a/cache", deny_mkdir_under, "PermissionError"),
    "read-only": ("ro", deny_writes_in, "it is not writable"),
}


@pytest.mark.parametrize("case", list(UNUSABLE))
def test_an_unusable_cache_dir_warns_once_and_builds_privately(
    tmp_path, monkeypatch, private, builds, case
):
    (tmp_path / "file").write_text("not a directory\n")
    (tmp_path / "ro").mkdir()
    relative, deny, why = UNUSABLE[case]
    bad = tmp_path / relative
    if deny is not None:
        deny(monkeypatch, tmp_path / relative.split("/")[0])
    monkeypatch.setenv("REN_CACHE_DIR", str(bad))
    probed = []
    real_probe = cache_dirs.probe
    monkeypatch.setattr(cache_dirs, "probe", lambda d: probed.append(d) or real_probe(d))
    with pytest.warns(RuntimeWarning) as caught:
        libs = [compile_cached(source(k), FLAGS) for k in (1, 2, 3)]
        compiler._memory.clear()
        libs.append(compile_cached(source(1), FLAGS))  # found again in the private directory
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert message.startswith(f"REN_CACHE_DIR='{bad}' cannot hold Ren's compile cache")
    assert why in message and "private temporary directory" in message
    assert probed == [bad]  # checked once
    assert [call(lib) for lib in libs] == [1, 2, 3, 1]
    assert all(private in lib.parents for lib in libs) and len(builds) == 3
    assert (tmp_path / "file").read_text() == "not a directory\n"


def test_threads_check_an_unusable_directory_once_and_warn_once(tmp_path, monkeypatch, builds):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("REN_CACHE_DIR", str(tmp_path / "file" / "cache"))
    probed = []
    real_probe = cache_dirs.probe

    def slow_probe(directory):
        probed.append(directory)
        time.sleep(0.05)  # long enough for every thread to arrive
        return real_probe(directory)

    monkeypatch.setattr(cache_dirs, "probe", slow_probe)
    results: dict[int, int] = {}
    barrier = threading.Barrier(6)

    def work(k: int) -> None:
        barrier.wait()
        results[k] = call(compile_cached(source(k), FLAGS, name=f"ren_t{k}"))

    with pytest.warns(RuntimeWarning, match="REN_CACHE_DIR") as caught:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {k: k for k in range(6)}
    assert len(probed) == 1 and len(caught) == 1 and len(builds) == 6


_PRIVATE_CHILD = """
from ren.codegen.compiler import compile_cached
import ctypes
lib = compile_cached("int ren_test_answer(void) { return 42; }\\n", ("-O1", "-shared", "-fPIC"))
print(ctypes.CDLL(str(lib)).ren_test_answer(), lib)
"""


def test_the_private_directory_is_removed_when_the_process_exits(tmp_path):
    (tmp_path / "file").write_text("")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    path = os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "REN_CACHE_DIR": str(tmp_path / "file" / "cache"), "PYTHONPATH": path}
    env["TMPDIR"] = str(tmp_path / "tmp")
    env.pop("REN_CCACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", _PRIVATE_CHILD],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer, lib = done.stdout.split()
    assert answer == "42" and Path(lib).parent.parent == tmp_path / "tmp"
    assert "RuntimeWarning: REN_CACHE_DIR=" in done.stderr and done.stderr.count("Warning") == 1
    assert list((tmp_path / "tmp").iterdir()) == []  # removed at exit


# --------------------------------------------------------------------------------------------
# entries that are not regular files

_FIFO_CHILD = """
import ctypes, os, stat, sys
from ren.codegen import cache_entries, compiler
from ren.codegen.compiler import compile_cached

src, flags = "int ren_test_answer(void) { return 42; }\\n", ("-O1", "-shared", "-fPIC")
lib = compile_cached(src, flags, name="ren_fifo")
for suffix in sys.argv[1].split(","):
    place = lib.with_suffix(suffix)
    place.unlink()
    os.mkfifo(place)  # nobody will ever write to it: opening it for reading would wait forever
compiler._memory.clear()
again = compile_cached(src, flags, name="ren_fifo")
regular = [stat.S_ISREG(os.lstat(p).st_mode) for p in (again, again.with_suffix(".sum"))]
print(again == lib, regular, cache_entries.valid(again), ctypes.CDLL(str(again)).ren_test_answer())
"""


@pytest.mark.parametrize("fifos", [".sum", ".so", ".so,.sum"])
def test_a_fifo_named_like_an_entry_is_replaced_without_hanging(cache, fifos):
    path = os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "REN_CACHE_DIR": str(cache), "PYTHONPATH": path}
    env.pop("REN_CCACHE", None)
    try:  # in a child process, so that a hang fails this test instead of stopping the suite
        done = subprocess.run(
            [sys.executable, "-c", _FIFO_CHILD, fifos],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"compile_cached hung on a FIFO in place of the entry's {fifos}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(maxsplit=1) == ["True", "[True, True] True 42\n"]


def test_a_symlink_in_place_of_an_entry_is_not_followed(cache, builds, tmp_path):
    lib = compile_cached(source(42), FLAGS)
    other = tmp_path / "elsewhere.so"
    shutil.copyfile(compile_cached(source(7), FLAGS), other)
    lib.unlink()
    lib.symlink_to(other)
    # the sum matches what the link points to: only refusing to follow the link tells them apart
    lib.with_suffix(".sum").write_text(cache_entries.checksum(other))
    compiler._memory.clear()
    again = compile_cached(source(42), FLAGS)
    assert again == lib and not again.is_symlink() and cache_entries.valid(again)
    assert call(again) == 42 and len(builds) == 3
    assert call(other) == 7  # the link's target is left alone


@pytest.mark.parametrize("suffix", [".so", ".sum"])
def test_a_directory_in_place_of_an_entry_sends_the_build_to_the_private_directory(
    cache, builds, private, suffix
):
    lib = compile_cached(source(), FLAGS)  # to learn the entry's name; never loaded
    place = lib.with_suffix(suffix)
    place.unlink()
    place.mkdir()
    (place / "mine").write_text("kept")
    compiler._memory.clear()
    with pytest.warns(RuntimeWarning, match=r"compile cache entry .* cannot be written") as caught:
        again = compile_cached(source(), FLAGS)
        compiler._memory.clear()
        assert compile_cached(source(), FLAGS) == again  # found in the private directory
    assert len(caught) == 1 and str(lib) in str(caught[0].message)
    assert private in again.parents and call(again) == 42 and len(builds) == 2
    assert (place / "mine").read_text() == "kept"  # a directory is never removed


# --------------------------------------------------------------------------------------------
# the size bound


def entry_bytes(lib: Path) -> int:
    return lib.stat().st_size + lib.with_suffix(".sum").stat().st_size


def used(lib: Path, seconds_ago: float) -> None:
    """Mark ``lib`` (and its sum) as last used ``seconds_ago`` seconds ago."""
    t = time.time() - seconds_ago
    for path in (lib, lib.with_suffix(".sum")):
        os.utime(path, (t, t))


def cache_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())


def test_the_least_recently_used_entry_goes_when_the_cache_is_full(cache, builds, monkeypatch):
    first = compile_cached(source(1), FLAGS)
    limit = 2.5 * entry_bytes(first)  # room for two entries, not three
    monkeypatch.setenv("REN_CACHE_MAX_MB", repr(limit / 2**20))
    used(first, 300)
    second = compile_cached(source(2), FLAGS)
    used(second, 200)
    assert first.exists() and second.exists()  # two fit
    third = compile_cached(source(3), FLAGS)
    assert not first.exists() and not first.with_suffix(".sum").exists()  # the oldest went
    assert cache_entries.valid(second) and cache_entries.valid(third)  # the newest stayed
    assert entries(cache) == sorted(p.name for p in (second, third, *map(sum_of, (second, third))))
    assert cache_bytes(cache) <= limit and len(builds) == 3
    # every library still loads: one that went is built again (and something else goes)
    for k in (1, 2, 3):
        assert call(compile_cached(source(k), FLAGS)) == k
        assert cache_bytes(cache) <= limit


def sum_of(lib: Path) -> Path:
    return lib.with_suffix(".sum")


def test_loading_from_disk_marks_an_entry_used(cache, builds, monkeypatch):
    a, b = compile_cached(source(1), FLAGS), compile_cached(source(2), FLAGS)
    used(a, 300)
    used(b, 200)
    monkeypatch.setenv("REN_CACHE_MAX_MB", repr(2.5 * entry_bytes(a) / 2**20))
    compiler._memory.clear()  # a new process
    assert compile_cached(source(1), FLAGS) == a and len(builds) == 2  # a disk hit...
    assert a.stat().st_mtime > time.time() - 60  # ...that marks it used
    c = compile_cached(source(3), FLAGS)
    assert a.exists() and not b.exists() and c.exists()
    assert [call(a), call(c)] == [1, 3]


def test_the_entry_just_built_stays_even_past_the_bound(cache, monkeypatch):
    monkeypatch.setenv("REN_CACHE_MAX_MB", "0.000001")  # about one byte
    for k in (1, 2, 3):
        lib = compile_cached(source(k), FLAGS)
        assert call(lib) == k
        assert entries(cache) == [lib.name, sum_of(lib).name]


def test_the_bound_removes_only_ren_entries(cache, monkeypatch):
    cache.mkdir(parents=True)
    others = {
        "notes.txt": "x" * 5000,
        "libfoo.so": "y" * 5000,
        "kernel-not-a-key.so": "z" * 5000,
        "ren_bad-0123456789abcdef01234567.failed.c": "int f(void) { return nope; }\n",
    }
    for name, text in others.items():
        (cache / name).write_text(text)
    monkeypatch.setenv("REN_CACHE_MAX_MB", "0.000001")
    compile_cached(source(1), FLAGS)
    lib = compile_cached(source(2), FLAGS)
    assert entries(cache) == sorted([*others, lib.name, sum_of(lib).name])
    assert all((cache / n).read_text() == t for n, t in others.items())


def test_the_private_directory_is_not_bounded(tmp_path, monkeypatch, builds):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("REN_CACHE_DIR", str(tmp_path / "file" / "cache"))
    monkeypatch.setenv("REN_CACHE_MAX_MB", "0.000001")  # would leave one entry in a shared cache
    with pytest.warns(RuntimeWarning, match="REN_CACHE_DIR"):
        libs = [compile_cached(source(k), FLAGS) for k in (1, 2, 3)]
    assert all(cache_entries.valid(lib) for lib in libs)  # this process's builds all stay
    assert [call(lib) for lib in libs] == [1, 2, 3] and len(builds) == 3


def test_an_entry_removed_before_it_is_loaded_is_built_again(cache, builds, monkeypatch):
    real = compiler.compile_cached
    removed: list[Path] = []

    def racing(*args, **kwargs):
        lib = real(*args, **kwargs)
        if not removed:  # another process evicts it between the build and the load
            lib.unlink()
            sum_of(lib).unlink()
            removed.append(lib)
        return lib

    monkeypatch.setattr(compiler, "compile_cached", racing)
    handle = compiler.load_cached(source(5), FLAGS, name="ren_gone")
    assert handle.ren_test_answer() == 5
    assert len(builds) == 2 and cache_entries.valid(removed[0])


_EVICTING_CHILD = """
import sys
from ren.codegen.compiler import load_cached
k = int(sys.argv[1])
for round in range(3):
    for j in range(4):
        src = "int ren_test_answer(void) { return %d; }\\n" % (10 * k + j)
        got = load_cached(src, ("-O1", "-shared", "-fPIC"), name="ren_p%d" % k).ren_test_answer()
        assert got == 10 * k + j, (got, k, j)
print("ok")
"""


def test_processes_sharing_a_tiny_cache_all_load_their_own_kernels(cache):
    path = os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "REN_CACHE_DIR": str(cache), "PYTHONPATH": path}
    env["REN_CACHE_MAX_MB"] = "0.03"  # two entries or so: every build evicts another's
    env.pop("REN_CCACHE", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _EVICTING_CHILD, str(k)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(1, 4)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    assert cache_bytes(cache) <= 0.03 * 2**20 + 40_000  # within the bound, but for the last one


# --------------------------------------------------------------------------------------------
# the cache deleted during a build


@pytest.fixture
def compiler_hook(monkeypatch):
    """``hook(before, after)``: run ``before()`` / ``after()`` around each compiler call that
    writes a library; the compiler's command lines are returned in a list."""
    runs: list[list[str]] = []
    find_compiler()
    real = subprocess.run

    def install(before=lambda n: None, after=lambda n: None):
        def run(cmd, *args, **kwargs):
            if "-o" not in cmd:
                return real(cmd, *args, **kwargs)
            runs.append(list(cmd))
            before(len(runs))
            done = real(cmd, *args, **kwargs)
            after(len(runs))
            return done

        monkeypatch.setattr(subprocess, "run", run)
        return runs

    return install


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_cache_deleted_during_a_build_is_built_again(cache, compiler_hook, when):
    def delete(n: int) -> None:
        if n == 1:
            shutil.rmtree(cache)

    runs = compiler_hook(**{when: delete})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: the cache is back
        lib = compile_cached(source(), FLAGS)
    assert len(runs) == 2 and lib.parent == cache and cache_entries.valid(lib) and call(lib) == 42
    assert entries(cache) == [lib.name, sum_of(lib).name]


def test_a_cache_deleted_during_every_build_ends_in_the_private_directory(
    cache, compiler_hook, private
):
    runs = compiler_hook(before=lambda n: shutil.rmtree(cache, ignore_errors=True))
    with pytest.warns(RuntimeWarning, match="disappeared during 3 builds"):
        lib = compile_cached(source(), FLAGS)
    assert len(runs) == compiler.BUILD_ATTEMPTS + 1
    assert private in lib.parents and call(lib) == 42


def test_a_real_rejection_is_still_a_compile_error_after_a_deleted_cache(cache, compiler_hook):
    runs = compiler_hook(before=lambda n: n == 1 and shutil.rmtree(cache))
    bad = "int ren_test_answer(void) { return ren_no_such_name; }\n"
    with pytest.raises(CompileError, match="ren_no_such_name"):
        compile_cached(bad, FLAGS, name="ren_bad")
    assert len(runs) == 2  # the first failure was the deleted cache, the second the source


# --------------------------------------------------------------------------------------------
# threads


def test_threads_compiling_one_source_at_once_share_one_build(cache, builds):
    libs = in_threads(lambda i: compile_cached(source(9), FLAGS, name="ren_same"), 8)
    assert len(set(libs)) == 1 and len(builds) == 1
    assert call(libs[0]) == 9 and entries(cache) == [libs[0].name, sum_of(libs[0]).name]


def test_threads_compiling_different_sources_each_get_their_own(cache, builds):
    answers = in_threads(lambda i: compiler.load_cached(source(i), FLAGS).ren_test_answer(), 8)
    assert answers == list(range(8)) and len(builds) == 8
    assert len(entries(cache)) == 16
