"""A saved plan, shown: ``python -m ren.viz PLAN_FILE``.

The file is read and checked as ``ren.load`` reads it (format, version, fingerprint), but nothing
is compiled or run: the manifest (every input, stored input and output with its spec), the kernels
in order (family, device, buffers, constants, source hash) and the arena as the memory picture.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from ren.capture.planfile import decode
from ren.capture.planfile import read as read_plan
from ren.engine.memory import MemoryPlan
from ren.viz.memory import plan_svg, plan_text

__all__ = ["plan_file_text", "write_plan_pictures"]


def _spec(code: object) -> str:
    value = decode(code)
    if value[0] == "const":
        return f"the constant {value[2]} of {value[1].short()}, {value[3]}, {value[4].value}"
    _, ring, size, dtype, device, domain, view = value
    window = f", limbs {view[0] // ring.n}.. of its buffer" if view else ""
    return f"{ring.short()} {domain.value} on {device} ({size} {dtype} words{window})"


def _ref(ref: list[str | int]) -> str:
    # ["view"|"own"|"input", index] or ["stored", name], as ren.capture.planshape checked it
    kind, where = cast(str, ref[0]), ref[1]
    return str({"input": f"in{where}", "view": f"t{where}", "own": f"out{where}"}.get(kind, where))


def plan_file_text(path: str | os.PathLike[str]) -> str:
    """The saved plan at ``path`` as text: header, manifest, kernels, arena picture."""
    data = read_plan(path)
    m = data["manifest"]
    out = [
        f"plan file {path}: {data['function']}, saved by Ren {data['ren']} "
        f"(format {data['version']})",
        f"fingerprint {data['fingerprint']}",
        "",
        "inputs (bound at each call):",
    ]
    out += [f"  in{i} {w['path']}: {_spec(w['spec'])}" for i, w in enumerate(m["inputs"])]
    if m["stored"]:
        out.append("stored inputs (given to ren.load by name; never in the file):")
        out += [f"  {name}: {_spec(spec)}" for name, spec in m["stored"].items()]
    out.append("outputs:")
    out += [f"  {w['path']}: {_spec(w['spec'])}" for w in m["outputs"]]
    out += [
        "",
        f"{len(data['units'])} exec units of {len(data['kernels'])} distinct kernels "
        "(t: arena views, out: the plan's own buffers):",
    ]
    infos = [decode(k["info"]) for k in data["kernels"]]
    for i, u in enumerate(data["units"]):
        info, digest = infos[u["kernel"]], data["kernels"][u["kernel"]]["source_sha256"]
        bufs = ", ".join(_ref(r) for r in u["bufs"])
        consts = f", {len(u['consts'])} constants" if u["consts"] else ""
        out.append(
            f"  {i:3d} {info.name:<34} {info.kind:<12} {info.device:<6} "
            f"[{bufs}]{consts}  source {digest[:12]}"
        )
    arenas = data["buffers"]["arenas"]
    out += ["", "arenas: " + (", ".join(f"{d} {n} bytes" for d, n in arenas) or "none")]
    memory = decode(data["memory"])
    assert isinstance(memory, MemoryPlan)
    for d in memory.devices:
        out += ["", plan_text(d)]
    return "\n".join(out) + "\n"


def write_plan_pictures(path: str | os.PathLike[str], out_dir: Path) -> list[Path]:
    """The saved plan's memory picture, one SVG per device, in ``out_dir``; their paths."""
    data = read_plan(path)
    memory = decode(data["memory"])
    kernels = [data["kernels"][u["kernel"]]["info"]["name"] for u in data["units"]]
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for d in memory.devices:
        target = out_dir / f"plan-memory-{d.device}.svg"
        target.write_text(plan_svg(d, kernels, f"{data['function']}: {d.device}"), "utf-8")
        written.append(target)
    return written
