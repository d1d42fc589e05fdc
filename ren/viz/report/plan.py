"""The report's HTML of a memory plan: each device's numbers, its picture and its buffers."""

from __future__ import annotations

from ren.engine.memory import MemoryPlan
from ren.viz.memory import buffer_order, plans_svg
from ren.viz.report.blocks import escape_html, html_table, inline_svg, plural


def plan_html(plan: MemoryPlan, names: list[str] | None, prefix: str) -> list[str]:
    """Each device's arena of ``plan``: its numbers, its picture and its buffers (a table)."""
    out = []
    svgs = dict(plans_svg(plan, names))
    for d in plan.devices:
        ratio = d.arena_bytes / d.lower_bound_bytes if d.lower_bound_bytes else 1.0
        out.append(
            f"<p><b>{escape_html(d.device)}</b>: {plural(len(d.buffers), 'planned buffer')}; "
            "unshared "
            f"{d.unshared_bytes} B, arena {d.arena_bytes} B, lower bound "
            f"{d.lower_bound_bytes} B (arena / lower bound {ratio:.2f}x).</p>"
        )
        out.append(f'<div class="memory">\n{inline_svg(svgs[d.device], f"{prefix}-m-{d.device}")}')
        out.append("</div>")
        rows = [
            [
                f"b{j}",
                escape_html(f"arena[{p.offset}:{p.offset + p.nbytes}]"),
                str(p.nbytes),
                escape_html(f"{p.size} \u00d7 {p.dtype}"),
                f"{p.first}" if p.first == p.last else f"{p.first}\u2013{p.last}",
            ]
            for j, p in enumerate(buffer_order(d))
        ]
        out.append(
            "<details><summary>The planned buffers (names as in the picture; the exec units "
            "name them by their place in the arena)</summary>"
        )
        out.append(html_table(["picture", "arena bytes", "bytes", "words", "kernels"], rows, (2,)))
        out.append("</details>")
    return out
