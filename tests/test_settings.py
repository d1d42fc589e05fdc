"""``ren.settings``: each environment variable declared once, parsed strictly, set per thread.

Oracles: tables written here by hand from the documented accepted values (not from the parser),
``os.environ`` itself (an override never touches it), threads that report what they read, and the
environment page of the docs (one row for each declared setting).
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from ren import settings
from ren.engine import debug_level
from tests.threads import in_threads

ROOT = Path(__file__).resolve().parents[1]

BOOLS = ["CHECK", "NO_PLAN", "VALIDATE", "POISON", "JIT_GRAPH", "CCACHE", "CUDA_EMULATE"]
TRUE_SPELLINGS = ["1", "true", "TRUE", "True", "yes", "YES", "on", "On", " 1 ", "\ttrue\n"]
FALSE_SPELLINGS = ["0", "false", "FALSE", "no", "No", "off", "OFF", " 0 ", " off\n"]
BAD_BOOLS = ["maybe", "2", "-1", "10", "tru", "y", "n", "1.0", "enable", "on off", "１"]

#: variable -> (good spelling -> value, bad spellings): the accepted values of the docs page
NUMBERS = {
    "REN_DEBUG": (
        {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, " 3 ": 3, "04": 4},
        ["abc", "5", "-1", "1.5", "0x1", "+1", "1e0", "٣", "two"],
    ),
    "REN_THREADS": (
        {"1": 1, "2": 2, "16": 16, " 8 ": 8, "128": 128},
        ["abc", "0", "-4", "1.5", "+2", "2 threads", "٣", "00"],
    ),
    "REN_COMPILE_JOBS": (
        {"1": 1, "2": 2, " 16 ": 16},
        ["0", "-1", "two", "1.5", "all"],
    ),
    "REN_CUDA_DEVICE": (
        {"0": 0, "1": 1, "7": 7, " 2 ": 2},
        ["-1", "gpu0", "1.0", "cuda:0", "first"],
    ),
    "REN_CACHE_MAX_MB": (
        {"1": 1.0, "0.5": 0.5, ".25": 0.25, "1e3": 1000.0, "2048": 2048.0, " 64 ": 64.0},
        ["0", "0.0", "-5", "abc", "inf", "nan", "1e400", "1_0", "10MB", "1,5"],
    ),
}

DEFAULTS = {
    "REN_DEVICE": "python",
    "REN_DEBUG": 0,
    "REN_CHECK": False,
    "REN_DUMP": None,
    "REN_NO_PLAN": False,
    "REN_VALIDATE": False,
    "REN_POISON": False,
    "REN_JIT_GRAPH": True,
    "REN_CCACHE": True,
    "REN_CACHE_DIR": None,
    "REN_CACHE_MAX_MB": 1024.0,
    "REN_SCHEDULE_CACHE": 256,
    "REN_PROGRESS": True,
    "REN_TIERED": True,
    "REN_COMPILE_JOBS": None,
    "REN_THREADS": None,
    "REN_CUDA_EMULATE": False,
    "REN_CUDA_DEVICE": 0,
    "REN_HEIR_OPT": None,
    "CC": None,
    "XDG_CACHE_HOME": None,
}


def by_name(name: str) -> settings.Setting:
    (setting,) = [s for s in settings.all_settings() if s.name == name]
    return setting


def test_every_variable_is_declared_once_with_its_default():
    names = [s.name for s in settings.all_settings()]
    assert len(names) == len(set(names))
    assert {n: by_name(n).default for n in names} == DEFAULTS
    for s in settings.all_settings():
        assert s.help.endswith(".") and s.accepted and s.type
        attribute = s.name.removeprefix("REN_")
        assert getattr(settings, attribute) is s  # settings.DEBUG is REN_DEBUG


@pytest.mark.parametrize("name", list(DEFAULTS))
@pytest.mark.parametrize("raw", [None, "", "   "], ids=["unset", "empty", "blank"])
def test_unset_empty_or_blank_means_the_default(monkeypatch, name, raw):
    if raw is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, raw)
    assert by_name(name).get() == DEFAULTS[name]


@pytest.mark.parametrize("name", BOOLS)
def test_booleans_accept_the_usual_spellings(monkeypatch, name):
    setting = getattr(settings, name)
    for raw in TRUE_SPELLINGS:
        monkeypatch.setenv(setting.name, raw)
        assert setting.get() is True, raw
    for raw in FALSE_SPELLINGS:
        monkeypatch.setenv(setting.name, raw)
        assert setting.get() is False, raw


@pytest.mark.parametrize("name", BOOLS)
@pytest.mark.parametrize("raw", BAD_BOOLS)
def test_a_bad_boolean_names_the_variable_the_value_and_the_spellings(monkeypatch, name, raw):
    setting = getattr(settings, name)
    monkeypatch.setenv(setting.name, raw)
    with pytest.raises(ValueError, match=rf"{setting.name}={re.escape(repr(raw))} is not") as e:
        setting.get()
    assert "1, true, yes, on or 0, false, no, off" in str(e.value)
    with pytest.raises(ValueError, match=setting.name):  # raised again, not remembered as good
        setting.get()


@pytest.mark.parametrize("name", list(NUMBERS))
def test_numbers_parse_their_accepted_values(monkeypatch, name):
    good, _ = NUMBERS[name]
    for raw, value in good.items():
        monkeypatch.setenv(name, raw)
        got = by_name(name).get()
        assert got == value and type(got) is type(value), raw


@pytest.mark.parametrize(
    "name, raw",
    [(name, raw) for name, (_, bad) in NUMBERS.items() for raw in bad],
)
def test_a_bad_number_names_the_variable_the_value_and_the_range(monkeypatch, name, raw):
    monkeypatch.setenv(name, raw)
    accepted = {
        "REN_DEBUG": "an integer from 0 to 4",
        "REN_THREADS": "a positive integer",
        "REN_COMPILE_JOBS": "a positive integer",
        "REN_CUDA_DEVICE": "an integer >= 0",
        "REN_CACHE_MAX_MB": "a positive number",
    }[name]
    with pytest.raises(ValueError, match=rf"{name}={re.escape(repr(raw))} is not") as e:
        by_name(name).get()
    assert accepted in str(e.value)


@pytest.mark.parametrize("name", ["REN_DUMP", "REN_CACHE_DIR", "REN_HEIR_OPT", "XDG_CACHE_HOME"])
def test_paths_are_taken_as_given(monkeypatch, tmp_path, name):
    for raw in [str(tmp_path / "a b"), "relative/dir", str(tmp_path / " lead")]:
        monkeypatch.setenv(name, raw)
        assert by_name(name).get() == Path(raw)


def test_strings_are_stripped(monkeypatch):
    monkeypatch.setenv("REN_DEVICE", " cpu ")
    monkeypatch.setenv("CC", "clang ")
    assert settings.DEVICE.get() == "cpu" and settings.CC.get() == "clang"


def test_each_read_sees_the_environment_as_it_is_now(monkeypatch):
    monkeypatch.setenv("REN_DEBUG", "2")
    assert settings.DEBUG.get() == 2 and debug_level() == 2
    os.environ["REN_DEBUG"] = "3"  # set in the middle of a program (monkeypatch restores it)
    assert settings.DEBUG.get() == 3 and debug_level() == 3
    monkeypatch.delenv("REN_DEBUG")
    assert debug_level() == 0


def test_debug_level_refuses_what_it_used_to_read_as_0(monkeypatch):
    monkeypatch.setenv("REN_DEBUG", "abc")
    with pytest.raises(ValueError, match=r"REN_DEBUG='abc' is not accepted.*0 to 4"):
        debug_level()


def test_a_bad_ren_device_is_refused_where_devices_are_known(monkeypatch):
    from ren import Poly, RingSpec

    monkeypatch.setenv("REN_DEVICE", "gpu")
    with pytest.raises(ValueError, match=r"unknown device 'gpu' \(from REN_DEVICE\)"):
        Poly([1, 2], RingSpec(2, (17,)))


# -- override ----------------------------------------------------------------------------------


def test_override_wins_over_the_environment_and_never_touches_it(monkeypatch):
    monkeypatch.setenv("REN_VALIDATE", "0")
    monkeypatch.delenv("REN_DEBUG", raising=False)
    before = dict(os.environ)
    with settings.override(REN_VALIDATE=True, REN_DEBUG=3):
        assert settings.VALIDATE.get() is True and debug_level() == 3
        assert dict(os.environ) == before
    assert settings.VALIDATE.get() is False and debug_level() == 0


def test_overrides_nest_and_the_innermost_wins(monkeypatch):
    monkeypatch.delenv("REN_DEBUG", raising=False)
    with settings.override(REN_DEBUG=1, REN_CHECK=True):
        with settings.override(REN_DEBUG=2):
            assert debug_level() == 2 and settings.CHECK.get() is True
            with settings.override(DEBUG=4):  # the name without REN_ works too
                assert debug_level() == 4
            assert debug_level() == 2
        assert debug_level() == 1
    assert debug_level() == 0


def test_short_names_override_as_the_issue_writes_them(monkeypatch):
    monkeypatch.delenv("REN_DEBUG", raising=False)
    monkeypatch.delenv("REN_VALIDATE", raising=False)
    with settings.override(DEBUG=2, VALIDATE=True):
        assert debug_level() == 2 and settings.VALIDATE.get() is True
    assert debug_level() == 0 and settings.VALIDATE.get() is False
    with (
        pytest.raises(TypeError, match="unknown setting 'NOT_A_SETTING'"),
        settings.override(NOT_A_SETTING=1),
    ):
        pass


def test_override_is_also_a_decorator(monkeypatch):
    monkeypatch.delenv("REN_DEBUG", raising=False)
    seen = []

    @settings.override(DEBUG=3)
    def traced(x: int) -> int:
        seen.append(debug_level())
        return x + 1

    assert debug_level() == 0  # decorating applies nothing yet
    assert traced(1) == 2 and traced(2) == 3  # each call runs inside the override
    assert seen == [3, 3] and debug_level() == 0
    with settings.override(REN_DEBUG=1):
        assert traced(0) == 1 and seen[-1] == 3  # the decorator's value wins inside the call
        assert debug_level() == 1


def test_an_override_is_undone_when_the_block_raises(monkeypatch):
    monkeypatch.delenv("REN_POISON", raising=False)
    with pytest.raises(KeyError), settings.override(REN_POISON=True):
        raise KeyError
    assert settings.POISON.get() is False


def test_override_values_strings_and_none(monkeypatch, tmp_path):
    monkeypatch.setenv("REN_DUMP", str(tmp_path / "env"))
    monkeypatch.setenv("REN_THREADS", "4")
    with settings.override(REN_DUMP=None, REN_THREADS="2", REN_CCACHE="off", REN_VALIDATE=1):
        assert settings.DUMP.get() is None  # None: the default, whatever the environment says
        assert settings.THREADS.get() == 2 and settings.CCACHE.get() is False
        assert settings.VALIDATE.get() is True
    with settings.override(REN_DUMP=tmp_path, REN_CACHE_MAX_MB=8):
        assert settings.DUMP.get() == tmp_path and settings.CACHE_MAX_MB.get() == 8.0


@pytest.mark.parametrize(
    "values, error, match",
    [
        ({"REN_NO_SUCH": 1}, TypeError, r"unknown setting 'REN_NO_SUCH'.*REN_DEBUG"),
        ({"REN_DEBUG": 5}, ValueError, r"REN_DEBUG=5 is not accepted.*0 to 4"),
        ({"REN_DEBUG": "abc"}, ValueError, r"REN_DEBUG='abc'"),
        ({"REN_DEBUG": 1.0}, TypeError, r"REN_DEBUG must be an int"),
        ({"REN_DEBUG": True}, TypeError, r"REN_DEBUG must be an int"),
        ({"REN_VALIDATE": 2}, ValueError, r"REN_VALIDATE=2 is not accepted"),
        ({"REN_VALIDATE": "maybe"}, ValueError, r"REN_VALIDATE='maybe'"),
        ({"REN_VALIDATE": 1.0}, TypeError, r"REN_VALIDATE must be a bool"),
        ({"REN_THREADS": 0}, ValueError, r"REN_THREADS=0 is not accepted.*positive integer"),
        ({"REN_THREADS": -4}, ValueError, r"REN_THREADS=-4"),
        ({"REN_CACHE_MAX_MB": 0}, ValueError, r"REN_CACHE_MAX_MB=0 is not accepted"),
        ({"REN_CACHE_MAX_MB": float("nan")}, ValueError, r"REN_CACHE_MAX_MB=nan"),
        ({"REN_CACHE_MAX_MB": "10MB"}, ValueError, r"REN_CACHE_MAX_MB='10MB'"),
        ({"REN_DUMP": 3}, TypeError, r"REN_DUMP must be a path"),
        ({"REN_DEVICE": 3}, TypeError, r"REN_DEVICE must be a string"),
    ],
)
def test_a_bad_override_is_refused_and_changes_nothing(monkeypatch, values, error, match):
    monkeypatch.delenv("REN_DEBUG", raising=False)
    with pytest.raises(error, match=match), settings.override(REN_CHECK=False, **values):
        pass  # pragma: no cover (the block never runs)
    assert debug_level() == 0 and settings.VALIDATE.get() is False


def test_a_thread_started_inside_an_override_does_not_see_it(monkeypatch):
    monkeypatch.delenv("REN_VALIDATE", raising=False)
    seen = {}
    with settings.override(REN_VALIDATE=True):
        thread = threading.Thread(target=lambda: seen.update(child=settings.VALIDATE.get()))
        thread.start()
        thread.join()
        seen["parent"] = settings.VALIDATE.get()
    assert seen == {"child": False, "parent": True}


def test_overrides_in_many_threads_at_once_stay_in_their_thread(monkeypatch):
    monkeypatch.delenv("REN_DEBUG", raising=False)
    wrong: list[tuple[int, int]] = []

    def work(i: int) -> None:
        level = i % 5
        for _ in range(300):
            with settings.override(REN_DEBUG=level):
                got = debug_level()
                if got != level:
                    wrong.append((level, got))
            if debug_level() != 0:
                wrong.append((level, -1))

    in_threads(work, 8)
    assert wrong == []


# -- users of the settings ---------------------------------------------------------------------


def test_the_conformance_kit_validates_through_an_override_not_the_environment(monkeypatch):
    from ren.testing import run as testing  # where pinpoint realizes

    monkeypatch.delenv("REN_VALIDATE", raising=False)
    seen = []
    monkeypatch.setattr(
        testing,
        "realize",
        lambda *polys: seen.append((settings.VALIDATE.get(), os.environ.get("REN_VALIDATE"))),
    )
    case = next(iter(testing.cases(quick=True)))
    assert testing.pinpoint(case, "python") == ""
    assert seen == [(True, None)]
    assert settings.VALIDATE.get() is False


def test_no_module_but_settings_reads_the_environment():
    readers = []
    for path in sorted((ROOT / "ren").rglob("*.py")):
        if path.name == "settings.py" and path.parent.name == "ren":
            continue
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"os\.environ|os\.getenv|environ\.get", text):
            line = text.count("\n", 0, match.start()) + 1
            readers.append(f"{path.relative_to(ROOT)}:{line}")
    assert readers == []


def test_the_environment_page_has_a_row_for_each_setting_and_no_other():
    page = (ROOT / "docs" / "reference" / "env.md").read_text(encoding="utf-8")
    table = page.split("\n## ", 1)[0]  # the first table; later ones are about building the docs
    rows = [line.split("|")[1].strip().strip("`") for line in table.splitlines() if "| `" in line]
    assert sorted(rows) == sorted(s.name for s in settings.all_settings())
    for s in settings.all_settings():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{s.name}` |"))
        assert "ValueError" in row or s.type in ("path", "str"), (
            s.name
        )  # says what a bad value does


def test_the_environment_page_example_runs_and_prints_what_it_shows():
    from tests.pages import run_page

    _, checked = run_page(ROOT / "docs" / "reference" / "env.md", strict=False)
    assert checked == 1  # (1 + 2x) * 3 = 3 + 6x in Z_17[x]/(x^2 + 1)
    assert settings.VALIDATE.get() is False  # the block's override ended with it


def test_a_variable_set_or_removed_while_running_is_seen_at_the_next_read():
    import os

    name = settings.DEBUG.name
    old = os.environ.pop(name, None)
    try:
        assert settings.DEBUG.get() == 0
        os.environ[name] = "3"
        assert settings.DEBUG.get() == 3
        del os.environ[name]
        assert settings.DEBUG.get() == 0
    finally:
        if old is not None:
            os.environ[name] = old
