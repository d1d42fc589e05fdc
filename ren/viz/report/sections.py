"""The report's HTML for one realization: passes, kernels, memory plan and exec units."""

from __future__ import annotations

from ren.ir.dot import to_dot
from ren.ir.node import Node, toposort
from ren.ir.region import region_name
from ren.viz.report.blocks import (
    BACKENDS,
    Graphs,
    created_text,
    escape_html,
    fold_helpers,
    html_table,
    kernel_count,
    kernels_and_names,
    millis,
    outputs,
    plural,
    rules_text,
    sortable,
)
from ren.viz.report.boxes import (
    PRECISION_LABEL,
    PRECISION_MEANING,
    collapsed_html,
    region_table,
    tree_html,
)
from ren.viz.report.plan import plan_html
from ren.viz.report.regions import Box, graph_dot, realization_tree
from ren.viz.trace import RealizationRecord, Trace, kernel_source

#: How many region graphs a realization's boxes hold, outermost first (``graphs="all"``: every
#: one): each is an inline picture, and a bootstrap has hundreds of regions.
REGION_GRAPHS = 40


class RealizationSections:
    """The HTML of one realization: its passes, kernels, memory plan and exec units."""

    trace: Trace
    labels: dict[int, str]
    focus: set[int]
    graphs: str
    times: bool
    drawer: Graphs
    sources: dict[tuple[Node, str], tuple[str, str]]
    max_nodes: int
    _trees: dict[int, Box | None]
    _region_dots: dict[int, dict[int, str]]

    # --- regions -----------------------------------------------------------------------------
    def tree(self, rec: RealizationRecord) -> Box | None:
        """The realization's region tree (``None`` when no kernel is in a region)."""
        if rec.index not in self._trees:
            self._trees[rec.index] = realization_tree(rec, kernels_and_names(rec)[0], rec.input)
        return self._trees[rec.index]

    def region_dots(self, rec: RealizationRecord) -> dict[int, str]:
        """``Box.rank -> DOT`` of the region graphs drawn in the realization's boxes."""
        if rec.index in self._region_dots:
            return self._region_dots[rec.index]
        dots: dict[int, str] = {}
        tree = self.tree(rec)
        if tree is not None and self.graphs != "none" and (self.pass_graphs(rec)):
            queue = list(tree.children)
            while queue and (self.graphs == "all" or len(dots) < REGION_GRAPHS):
                box = queue.pop(0)
                queue.extend(box.children)
                if not box.loose and 0 < len(box.nodes) <= self.max_nodes:
                    dots[box.rank] = graph_dot(box)
        self._region_dots[rec.index] = dots
        return dots

    def graph(self, root: Node, prefix: str, created: frozenset[Node] = frozenset()) -> str:
        """A graph drawn, or drawn collapsed to its regions when it is over the size limit."""
        nodes = len(toposort(root))
        if nodes > self.max_nodes:
            return collapsed_html(root, self.max_nodes, created)
        return self.drawer.html(to_dot(root, created=created), nodes, prefix)

    def regions(self, rec: RealizationRecord) -> str:
        """The realization's region tree as HTML (empty when it has none)."""
        tree = self.tree(rec)
        if tree is None:
            return ""
        i = rec.index
        dots = self.region_dots(rec)
        names = {k: kernel.info.name for k, kernel in enumerate(kernels_and_names(rec)[0])}

        def link(k: int) -> str:
            return f'<a href="#r{i}-k{k}">{k}\u00a0<code>{escape_html(names[k])}</code></a>'

        def picture(box: Box, anchor: str) -> str:
            if box.rank in dots:
                what = f"its graph: {plural(len(box.nodes), 'node')} (dashed: from outside)"
                inner = self.drawer.html(dots[box.rank], len(box.nodes), f"{anchor}-d")
                return f"<details><summary>{what}</summary>{inner}</details>"
            if len(box.nodes) > self.max_nodes:
                return (
                    f'<p class="muted">Its graph has {plural(len(box.nodes), "node")}, more '
                    f"than {self.max_nodes}: its regions above are the graph, collapsed.</p>"
                )
            if not self.pass_graphs(rec):
                return ""
            return (
                f'<p class="muted">Its graph ({plural(len(box.nodes), "node")}) is not drawn: '
                f"the report draws {REGION_GRAPHS} region graphs, outermost first "
                "(<code>--all-graphs</code> draws every one).</p>"
            )

        out = [
            "<h4>Regions</h4>",
            "<p>The kernels grouped by region (<code>ren.region</code>): one box per region, "
            "with its kernels, their time, the bytes they write, the key-switching key bytes "
            "they read and, for CKKS, the level and scale in and out, the precision of its output "
            f"({PRECISION_LABEL}: {PRECISION_MEANING} against the shadow's slots; where the "
            "values pass 1, also relative to max |v|) and any range "
            "it breaks (for BFV and BGV, the level and the noise budget left). Rows follow the "
            "data: a box reads from boxes above it (\u2190 names them). Click a box to open it in "
            "place.</p>",
            tree_html(tree, f"r{i}", self.times, link, picture),
            "<details><summary>The regions as a table (click a heading to sort)</summary>",
        ]
        head = ["region", "instances", "kernels", "time", "written", "key bytes read"]
        head += ["level, scale (first)", f"precision (lowest; {PRECISION_LABEL})", "range"]
        table = region_table(tree, self.times)
        rows = [
            [(escape_html(path) or "-", None), *[(escape_html(c), k) for c, k in cells]]
            for path, cells in table
        ]
        out.append(sortable(head, rows, num=(1, 2, 3, 4, 5, 7, 8)))
        out.append("</details>")
        return "\n".join(out)

    # --- which graphs ------------------------------------------------------------------------
    def pass_graphs(self, rec: RealizationRecord) -> bool:
        """Whether the graph after each pass is drawn for this realization."""
        return self.graphs == "all" or (self.graphs == "focus" and rec.index in self.focus)

    def lazy_graph(self, rec: RealizationRecord) -> bool:
        """Whether the realization's graph may be drawn on request."""
        return self.graphs != "none"

    def realizations_section(self) -> str:
        """The section of every realization, as HTML."""
        out = ['<section id="realizations">', "<h2>Realizations</h2>"]
        if not self.trace.realizations:
            out.append("<p>No realization was recorded.</p>")
        for rec in self.trace.realizations:
            out.append(self.realization(rec))
        out.append("</section>")
        return "\n".join(out)

    def realization(self, rec: RealizationRecord) -> str:
        """One realization: heading, facts, passes, kernels, memory and exec units, as HTML."""
        i = rec.index
        label = self.labels.get(i, "")
        heading = f"Realization {i}" + (f": {label}" if label else "")
        facts_ = f"{outputs(rec)}, {kernel_count(rec)}"
        is_open = " open" if i in self.focus else ""
        out = [
            f'<details class="realization" id="r{i}"{is_open}>',
            f"<summary><h3>{escape_html(heading)}</h3> "
            f"<span class=muted>\u2014 {escape_html(facts_)}, "
            f"{millis(rec.seconds, self.times)}</span></summary>",
            self.regions(rec),
            "<h4>The lazy graph</h4>",
        ]
        if self.lazy_graph(rec):
            nodes = len(toposort(rec.input))
            out.append(f"<p>{plural(nodes, 'node')}, as handed to the scheduler.</p>")
            out.append(self.graph(rec.input, f"r{i}-in"))
        else:
            out.append("<p class=muted>Not drawn (graphs='none').</p>")
        if self.times:  # like times, it depends on what ran before in the process
            out.append(f"<p class=muted>{escape_html(cache_line(rec))}</p>")
        out.append(self.passes(rec))
        out.append(self.kernels(rec))
        out.append(self.memory(rec))
        out.append(self.units(rec))
        out.append("</details>")
        return "\n".join(out)

    def passes(self, rec: RealizationRecord) -> str:
        """The realization's passes, with times and the rules that fired, as HTML."""
        i = rec.index
        out = ["<h4>Passes</h4>"]
        if not rec.passes:
            out.append("<p>No pass ran.</p>")
            return "\n".join(out)
        rows, previous = [], rec.input
        for p in rec.passes:
            same = p.graph is previous
            rows.append(
                [
                    f'<span id="r{i}-row{p.step:02d}">{p.step}</span>',
                    f'<a href="#r{i}-pass{p.step:02d}">{escape_html(p.name)}</a>'
                    if self.pass_graphs(rec)
                    else escape_html(p.name),
                    millis(p.seconds, self.times),
                    str(len(toposort(p.graph))),
                    "no change" if same else str(len(p.created)),
                    escape_html(rules_text(p.rule_counts())),
                ]
            )
            previous = p.graph
        head = ["step", "pass", "time", "nodes after", "created", "rules fired"]
        out.append(html_table(head, rows, num=(0, 2, 3, 4)))
        if not self.pass_graphs(rec):
            out.append(
                '<p class="muted">The graph after each pass is drawn for the open realizations '
                "only (<code>--all-graphs</code> draws every one).</p>"
            )
            return "\n".join(out)
        out.append(
            "<p>The graph after each pass (nodes the pass created: thick red border; the nodes "
            "above them, rebuilt because a source changed, are not marked):</p>"
        )
        previous = rec.input
        for p in rec.passes:
            same = p.graph is previous
            nodes = len(toposort(p.graph))
            what = "no change" if same else f"{plural(len(p.created), 'node')} created"
            what += f", {len(p.rebuilt)} rebuilt" if p.rebuilt else ""
            out.append(
                f'<details class="pass" id="r{i}-pass{p.step:02d}"><summary>'
                f"{p.step:02d} <b>{escape_html(p.name)}</b> \u2014 {what}, "
                f"{millis(p.seconds, self.times)}"
                "</summary>"
            )
            out.append(f"<p>Rules fired: {escape_html(rules_text(p.rule_counts()))}.</p>")
            if same:
                out.append("<p>The graph is the same as before this pass.</p>")
            else:
                if p.created:
                    out.append(f"<p>Created: {escape_html(created_text(p.created))}.</p>")
                out.append(f"<p>{plural(nodes, 'node')} after the pass.</p>")
                out.append(self.graph(p.graph, f"r{i}-p{p.step:02d}", p.created))
            out.append("</details>")
            previous = p.graph
        return "\n".join(out)

    def kernels(self, rec: RealizationRecord) -> str:
        """The realization's scheduled kernels, as HTML."""
        i = rec.index
        out = ["<h4>Scheduled kernels</h4>"]
        kernels, names = kernels_and_names(rec)
        if not kernels:
            out.append(
                "<p>None recorded: the realization stopped before its kernels were made.</p>"
            )
            return "\n".join(out)
        if not rec.kernels:
            out.append(
                '<p class="note">Read off the graph after the last pass: this realization was '
                "scheduled only (the scheduler was called directly, or what followed it "
                "failed), so nothing was planned or run.</p>"
            )
        rows = []
        regions = any(getattr(k, "region", ()) for k in kernels)  # ren.region names
        for k, kernel in enumerate(kernels):
            bufs = [names.get(id(b), "?") for b in kernel.bufs]
            row = [
                f'<a href="#r{i}-k{k}">{k}</a>',
                f"<code>{escape_html(kernel.info.name)}</code>",
                escape_html(kernel.info.kind),
                escape_html(kernel.info.device),
                escape_html(f"n={kernel.info.ring.n}\u00a0L={kernel.info.ring.L}"),
                escape_html(kernel.info.domain.value),
                escape_html(", ".join(bufs)),
            ]
            if regions:
                row.insert(2, escape_html(region_name(getattr(kernel, "region", ())) or "-"))
            rows.append(row)
        head = ["#", "kernel", "kind", "device", "ring", "writes", "buffers (slot 0 written)"]
        if regions:
            head.insert(2, "region")
        out.append(_folded(html_table(head, rows, num=(0,)), len(rows), "kernel"))
        out.append(
            "<p>The source of each kernel for every backend (rendered, not compiled; a body "
            "already shown links to where it is):</p>"
        )
        for k, kernel in enumerate(kernels):
            out.append(
                f'<details class="kernel" id="r{i}-k{k}"><summary>kernel {k}: '
                f"<code>{escape_html(kernel.info.name)}</code></summary>"
            )
            for device, what in BACKENDS:
                anchor = f"r{i}-k{k}-{device}"
                first = self.sources.get((kernel.ast, device))
                if first is not None:
                    out.append(
                        f'<p id="{anchor}">{device} ({escape_html(what)}): the same source as '
                        f'<a href="#{first[0]}">{escape_html(first[1])}</a>.</p>'
                    )
                    continue
                self.sources[(kernel.ast, device)] = (anchor, f"realization {i}, kernel {k}")
                try:
                    text = kernel_source(kernel, device)
                except Exception as e:  # one backend failing to render keeps the others
                    text = f"/* could not render for {device}: {type(e).__name__}: {e} */\n"
                main, folded = fold_helpers(text)
                helpers = "".join(
                    f"<details><summary>{escape_html(line.strip())}</summary><pre>{escape_html(block)}</pre>"
                    "</details>"
                    for line, block in folded
                )
                out.append(
                    f'<details id="{anchor}"><summary>{device} ({escape_html(what)})</summary>'
                    f"<pre>{escape_html(main)}</pre>{helpers}</details>"
                )
            out.append("</details>")
        return "\n".join(out)

    def memory(self, rec: RealizationRecord) -> str:
        """The realization's memory plan, as HTML."""
        i = rec.index
        out = ["<h4>Memory plan</h4>"]
        if not rec.plan.devices:
            out.append(
                "<p>Nothing was planned: every buffer of this realization is an input, an output "
                "or kept for another reason (see <code>docs/memory.md</code>).</p>"
            )
            return "\n".join(out)
        names = [k.info.name for k in rec.kernels]
        out += plan_html(rec.plan, names, f"r{i}")
        return "\n".join(out)

    def units(self, rec: RealizationRecord) -> str:
        """The realization's exec units, in the order they ran, as HTML."""
        out = ["<h4>Exec units, in the order they ran</h4>"]
        if not rec.units:
            out.append("<p>No exec unit was made.</p>")
            return "\n".join(out)
        rows = [
            [
                str(u.index),
                f"<code>{escape_html(u.name)}</code>",
                escape_html(u.kind),
                escape_html(u.device),
                escape_html(", ".join(u.buffers)),
                millis(u.seconds, self.times),
            ]
            for u in rec.units
        ]
        total = sum(u.seconds or 0.0 for u in rec.units)
        rows.append(["", "<b>total</b>", "", "", "", millis(total, self.times)])
        table = html_table(["#", "kernel", "kind", "device", "buffers", "time"], rows, (0, 5))
        out.append(_folded(table, len(rows) - 1, "exec unit"))
        return "\n".join(out)


#: A table of more rows than this is folded (a closed ``<details>``): laying out a thousand rows
#: is most of the time a browser takes to open a bootstrap's report.
FOLD_ROWS = 64


def _folded(table: str, rows: int, noun: str) -> str:
    """``table`` as is, or folded when it has more than ``FOLD_ROWS`` rows."""
    if rows <= FOLD_ROWS:
        return table
    return f"<details><summary>The {plural(rows, noun)} (click to open)</summary>{table}</details>"


def cache_line(rec: RealizationRecord) -> str:
    """What the schedule cache did for the realization, in words."""
    return {
        "miss": "Schedule cache: miss (the passes below ran, and their result was kept).",
        "hit, scheduled again": "Schedule cache: hit. Outside the report no pass would run; "
        "the passes below ran again so that they can be shown.",
        "hit": "Schedule cache: hit (no pass ran).",
    }.get(rec.cache, "Schedule cache: off (REN_SCHEDULE_CACHE=0).")
