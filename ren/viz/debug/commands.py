"""The ``(ren)`` prompt: one command a screen of the ``Stepper``; ``debug(*values)``."""

from __future__ import annotations

import cmd
import sys
from typing import TextIO

from ren.errors import RenError
from ren.viz.debug.screens import int_arg
from ren.viz.debug.stepper import Stepper

_HELP = """\
commands (a name in brackets is optional; aliases after the slash):
  passes                   the passes, with the rules each fired and its time; '->' marks the cursor
  step / s                 the next pass and what it changed; after the last pass, run one unit
  pass N                   go to pass N (0: the input graph): rules fired, nodes created, graph
  graph [N]                the whole graph after pass N (default: the cursor)
  kernels / k              the kernels in execution order: kind, device, buffers, whether it ran
  source N [DEVICE]        what DEVICE (python, cpu or cuda; default its own) runs for kernel N
  run [N] / r              run the next N exec units (default 1); 'run all' runs the rest
  regions [DEPTH]          the regions (paths cut to DEPTH names, default 2) in the order they
                           run: their kernels, units, and how many ran
  next region [DEPTH] / nr run to the end of the region the next unit is in; then the watched
                           ciphertexts that became available ('slots')
  finish [DEPTH] / f       run until every kernel of the next unit's region ran (a whole stage)
  buffer NAME [limbs|coeffs] [COUNT] / b
                           a buffer's words decoded: limbs (plain residues) or coeffs (CRT ints);
                           NAME as in 'kernels' (b3, arena[0:128]), or kI (what kernel I writes),
                           kI.S (slot S of kernel I)
  arena [all] / a          the memory arena now: which regions hold data, which are free; a
                           summary for a large plan ('arena all' shows every buffer)
  slots                    decrypted slots of the watched CKKS ciphertexts, precision (absolute)
                           vs the shadow given to watch, and the ranges they break
  continue / c             run the rest of this realization and go on
  quit / q                 run the rest and go on without stopping again
  help [COMMAND]           this list, or one command's help
An empty line repeats the last step, run, next region or finish (any other: nothing)."""

#: The commands an empty line repeats (as a debugger's Enter goes on stepping).
_REPEATED = frozenset({"step", "s", "run", "r", "next", "nr", "finish", "f"})


# --------------------------------------------------------------------------------------------
# the interactive loop


class Debugger(cmd.Cmd):
    """The ``(ren)`` prompt over a ``Stepper``; ``help`` lists the commands.

    Args:
        stepper: the stepper to drive.
        stdin: where commands come from (default: the terminal, with line editing).
        stdout: where screens go (default: the terminal).
        leaving: what is said when the prompt is left.
    """

    prompt = "(ren) "

    def __init__(
        self,
        stepper: Stepper,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        leaving: str = "leaving the debugger",
    ) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        if stdin is not None:
            self.use_rawinput = False
        self.stepper = stepper
        self.leaving = leaving  # said when the prompt is left
        self.quit_all = False  # 'quit': no more stops in this program

    def say(self, text: str) -> None:
        """Write one screen."""
        self.stdout.write(text.rstrip("\n") + "\n")
        self.stdout.flush()

    def loop(self) -> None:
        """Read commands until ``continue``, ``quit`` or end of input; then run the rest."""
        intro = self.stepper.banner() + "\ntype help for the commands"
        while True:
            try:
                self.cmdloop(intro)
                break
            except KeyboardInterrupt:
                self.say("\ninterrupted: 'continue' runs the rest, 'quit' stops debugging")
                intro = ""
        if not self.stepper.done:
            self.say(self.stepper.finish())

    def _leave(self) -> bool:
        if not self.stepper.done:
            self.say(self.stepper.finish())
        self.say(self.leaving)
        return True

    # --- plumbing --------------------------------------------------------------------------------
    def onecmd(self, line: str) -> bool:
        """Run one command line; a bad argument is said as an error and the prompt stays."""
        try:
            return super().onecmd(line)
        except (ValueError, TypeError, KeyError, IndexError, RenError) as e:
            self.say(f"error: {e}")
            return False

    def default(self, line: str) -> None:
        """Say that the command is unknown; the prompt stays."""
        self.say(f"error: unknown command {line.split()[0]!r}; type help for the commands")

    def emptyline(self) -> bool:
        """Repeat the last command if it was ``step``, ``run`` or ``next region``; else nothing."""
        words = self.lastcmd.split()
        if words and words[0] in _REPEATED:
            return self.onecmd(self.lastcmd)
        return False

    # The do_* docstrings are the commands' ``help`` text: each starts with the command as typed,
    # in lower case (hence ``noqa: D403``). The API docs render them as Markdown, where
    # ``[a] [b]`` is a reference link: two spaces between brackets keep it text.
    def do_help(self, arg: str) -> bool | None:
        """help [COMMAND]: the commands, or one command's help."""  # noqa: D403
        if arg.strip():
            name = arg.strip()
            method = getattr(self, f"do_{name}", None)
            if method is None or not method.__doc__:
                self.say(f"error: no command {name!r}; type help for the commands")
            else:
                self.say(method.__doc__)
            return False
        self.say(_HELP)
        return False

    # --- commands --------------------------------------------------------------------------------
    def do_passes(self, arg: str) -> bool:
        """passes: every pass with its rewrites, nodes created and time; '->' is the cursor."""
        self.say(self.stepper.passes())
        return False

    def do_step(self, arg: str) -> bool:
        """step [N] (s): the next pass and what it changed; after the last pass, the next unit."""  # noqa: D403
        count = int_arg(arg, "the number of steps") if arg.strip() else 1
        for _ in range(max(count, 1)):
            self.say(self.stepper.step())
        return False

    do_s = do_step

    def do_pass(self, arg: str) -> bool:
        """pass N: pass N (0 is the input graph): the rules it fired, nodes created, the graph.

        The cursor moves there ('graph' shows it whole, 'step' goes on from it).
        """  # noqa: D403
        if not arg.strip():
            raise ValueError("which pass? 'pass N' with N from 0 (the input) to 12")
        i = int_arg(arg.strip(), "the pass")
        self.say(self.stepper.show_pass(i))
        self.stepper.cursor = i
        return False

    def do_graph(self, arg: str) -> bool:
        """graph [N]: the whole graph after pass N (default: the cursor; 0 is the input)."""  # noqa: D403
        i = int_arg(arg.strip(), "the pass") if arg.strip() else None
        self.say(self.stepper.graph(i))
        return False

    def do_kernels(self, arg: str) -> bool:
        """kernels (k): the kernels in execution order, their buffers and whether they ran."""  # noqa: D403
        self.say(self.stepper.kernels())
        return False

    do_k = do_kernels

    def do_source(self, arg: str) -> bool:
        """source N [python|cpu|cuda]: what that device runs for kernel N (rendered, not built)."""  # noqa: D403
        words = arg.split()
        if not words or len(words) > 2:
            raise ValueError("usage: source N [python|cpu|cuda]")
        device = words[1] if len(words) > 1 else None
        self.say(self.stepper.source(int_arg(words[0], "the kernel"), device))
        return False

    def do_run(self, arg: str) -> bool:
        """run [N|all] (r): run the next N exec units (default 1), or all that are left."""  # noqa: D403
        text = arg.strip()
        count = None if text == "all" else int_arg(text, "the number of units") if text else 1
        self.say(self.stepper.run(count))
        return False

    do_r = do_run

    def do_regions(self, arg: str) -> bool:
        """regions [DEPTH]: the regions (paths cut to DEPTH names, default 2) in running order.

        Each with its kernels' index ranges, its units and how many ran; '->' marks the region
        of the next unit.
        """  # noqa: D403
        depth = int_arg(arg.strip(), "the region depth") if arg.strip() else 2
        self.say(self.stepper.regions(depth))
        return False

    def do_next(self, arg: str) -> bool:
        """next region [DEPTH] (nr): run to the end of the region the next unit is in.

        Regions are cut to DEPTH names (default 2: bootstrap/eval_mod); the screen names what
        ran, then shows the watched ciphertexts that became available ('slots').
        """  # noqa: D403
        words = arg.split()
        if not words or words[0] != "region" or len(words) > 2:
            raise ValueError("usage: next region [DEPTH] (nr [DEPTH]); 'step' goes on one step")
        return self.do_nr(" ".join(words[1:]))

    def do_nr(self, arg: str) -> bool:
        """nr [DEPTH]: 'next region [DEPTH]'."""  # noqa: D403
        depth = int_arg(arg.strip(), "the region depth") if arg.strip() else 2
        self.say(self.stepper.next_region(depth))
        return False

    def do_finish(self, arg: str) -> bool:
        """finish [DEPTH] (f): run until every kernel of the next unit's region has run.

        The region's last kernel may come after kernels of others (they interleave): those run
        too. Regions are cut to DEPTH names (default 2); the screen is 'next region's.
        """  # noqa: D403
        depth = int_arg(arg.strip(), "the region depth") if arg.strip() else 2
        self.say(self.stepper.finish_region(depth))
        return False

    do_f = do_finish

    def do_buffer(self, arg: str) -> bool:
        """buffer NAME [limbs|coeffs]  [COUNT] (b): a buffer's words decoded (default coeffs, 8).

        NAME as 'kernels' shows it (b3, arena[0:128]), kI (what kernel I writes) or kI.S (slot S
        of kernel I).
        """  # noqa: D403
        words = arg.split()
        if not words:
            raise ValueError("usage: buffer NAME [limbs|coeffs] [COUNT]")
        as_, limit = "coeffs", 8
        for w in words[1:]:
            if w.isdigit():
                limit = int(w)
            else:
                as_ = w
        self.say(self.stepper.buffer(words[0], as_, limit))
        return False

    do_b = do_buffer

    def do_arena(self, arg: str) -> bool:
        """arena [all] (a): the memory arena before the next kernel: regions in use and free.

        A plan too large for a screen (a bootstrap's) is summed up: the arena's size and peak, a
        smaller picture, the largest buffers in use; 'arena all' shows every buffer.
        """  # noqa: D403
        text = arg.strip()
        if text not in ("", "all"):
            raise ValueError(f"usage: arena [all], not 'arena {text}'")
        self.say(self.stepper.arena(full=text == "all"))
        return False

    do_a = do_arena

    def do_slots(self, arg: str) -> bool:
        """slots [COUNT]: the watched CKKS ciphertexts' decrypted slots and bits of precision.

        The precision is absolute (-log2 of the largest slot error, as ckks.precision_bits) against
        the plaintext shadow given to ren.viz.debug.watch; a value outside the range of the
        bootstrap or function it feeds gets an "out of range" line.
        """  # noqa: D403
        limit = int_arg(arg.strip(), "the number of slots") if arg.strip() else 4
        self.say(self.stepper.slots(limit=limit))
        return False

    def do_continue(self, arg: str) -> bool:
        """continue (c): run the rest of this realization and let the program go on."""  # noqa: D403
        return self._leave()

    do_c = do_continue

    def do_quit(self, arg: str) -> bool:
        """quit (q): run the rest of this realization; the program goes on without stopping."""  # noqa: D403
        self.quit_all = True
        return self._leave()

    do_q = do_quit

    def do_EOF(self, arg: str) -> bool:
        """End of input: as 'quit'."""
        self.say("")
        return self.do_quit(arg)


def debug(
    *values: object,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    region: str | None = None,
) -> Stepper | None:
    """Step through the realization of ``values`` at a ``(ren)`` prompt.

    ``help`` lists the commands. When the prompt is left, the rest runs, so ``values`` end up
    realized.

    Args:
        values: ``Poly`` or ``ckks.Ciphertext`` values (see ``Stepper``).
        stdin: where commands come from (default: the terminal).
        stdout: where screens go (default: the terminal).
        region: run the units before the first kernel in this region (a name such as
            ``eval_mod``, or a path such as ``bootstrap/eval_mod``) before the prompt opens.

    Returns:
        stepper (Stepper | None): the ``Stepper``, or ``None`` when there was nothing to realize
        or no kernel is in ``region`` (then nothing ran: the values are as they were).
    """
    out = stdout if stdout is not None else sys.stdout
    try:
        stepper = Stepper(*values)
        if region is not None:
            stepper.title = stepper.run_to_region(region)
    except ValueError as e:
        out.write(f"{e}\n")
        return None
    Debugger(stepper, stdin, out).loop()
    return stepper
