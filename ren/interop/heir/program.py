"""A HEIR program on Ren: the module's functions interpreted, its scheme ops on Ren's values.

``Program(module)`` reads the scheme and its chain (``ren.interop.heir.schemes.params``), makes a
Ren context of exactly those moduli and runs the module's functions by their roles in
``heir.interface``: the client's encryption functions (``client.encrypt``, and
``client.encrypt_zero`` for the encryptions of zero the entry asks for), the entry function (the
server's computation) and the client's decryption functions. The plain ops run on NumPy
(``ren.interop.heir.cleartext``); every scheme op runs in a region of its own, named by the op and
its result in the lowered module, with its line there and its source location as notes, so that
``python -m ren.viz`` on a script that runs a program shows one box per op with its level, scale
and precision. The same module runs in cleartext (``program.cleartext``) on slot vectors
(``ren.interop.heir.clear``): the reference an encrypted run is checked against.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ren.capture.function import jit as ren_jit
from ren.interop.heir.clear import ClearCkks, ClearInt, Slots
from ren.interop.heir.cleartext import Interpreter
from ren.interop.heir.ir import MlirError, Module, Op, Typed, tensor_type
from ren.interop.heir.ops import SCHEME_OPS, SHOWN
from ren.interop.heir.schemes import engine_for, params, scheme_of
from ren.ir.region import note, noted, region
from ren.schemes import bfv, bgv, ckks

__all__ = ["Encrypted", "Program"]


@dataclasses.dataclass(frozen=True)
class Encrypted:
    """An encrypted argument or result: what ``encrypt_<name>`` and ``eval`` give.

    ``name`` is the argument's name (``eval`` refuses it in another argument's place) or
    ``result0``...; ``values`` the ciphertexts in order, ``shape`` the tensor of them (``None``:
    one ciphertext). A ``ren.jit`` function may take and return it.
    """

    name: str
    values: tuple[Any, ...]
    shape: tuple[int, ...] | None

    @classmethod
    def of(cls, name: str, value: Any) -> Encrypted:
        """``value`` (a ciphertext, or an array of them) under ``name``."""
        if isinstance(value, np.ndarray):
            return cls(name, tuple(value.ravel()), value.shape)
        return cls(name, (value,), None)

    def value(self) -> Any:
        """As the module holds it: one ciphertext, or a NumPy array of them."""
        if self.shape is None:
            return self.values[0]
        out = np.empty(len(self.values), dtype=object)
        out[:] = self.values
        return out.reshape(self.shape)


class _Run(Interpreter):
    """One run of a program's functions with one engine (Ren's, or a cleartext one)."""

    def __init__(self, program: Program, engine: Any, trace: list[Any] | None = None) -> None:
        super().__init__(program.module, SCHEME_OPS)
        self.scheme = program.scheme
        self.engine = engine
        self.trace = trace
        self.regions = not isinstance(engine, ClearCkks)
        self.locations = program.locations

    def run_op(self, op: Op, values: list[Any]) -> list[Any]:
        if op.name not in SHOWN:
            return super().run_op(op, values)
        if not self.regions:
            out = super().run_op(op, values)
        else:
            label = f"{op.name} {op.results[0]}" if op.results else op.name
            if op.line in self.locations:
                label += f" ({self.locations[op.line].replace('/', ':')})"
            with region(label):
                note(mlir_line=op.line, **({"source": op.loc} if op.loc else {}))
                for value in values:
                    if noted("in", value):
                        break
                out = super().run_op(op, values)
                noted("out", out[0])
        if self.trace is not None:
            self.trace.append((op, out[0]))
        return out


class Program:
    """A lowered HEIR module (CKKS, BGV or BFV), run on Ren.

    ``program(*args)`` gives the function's result on ``args`` (arrays shaped like its arguments):
    encrypted, computed and decrypted. ``encrypt_<name>``, ``eval`` and ``decrypt_result`` are
    those steps one at a time, as heir-py's own backends name them; ``cleartext(*args)`` runs the
    same module on plain slot vectors.

    Args:
        module: the module (``reader.parse`` of heir-opt's ``--mlir-to-ckks`` or ``--mlir-to-bgv``
            output; ``ren.interop.heir.load`` reads any text or path).
        insecure: accept a chain beyond the HE standard's bound (as Ren's ``Params``).
        seed: the contexts' seed (keys and encryption randomness); ``None``: fresh.
        device: Ren's device for the ciphertexts (``program(..., device=)`` may name another).
        arg_names: the function's argument names (heir-py's frontend knows them); by default the
            names in the client's function names (``f__encrypt__arg0``: ``arg0``).

    Raises:
        MlirError: a module without a scheme, its chain, or an entry function.
        ValueError: a chain Ren's ``Params`` refuses (its message).
    """

    def __init__(self, module: Module, *, insecure: bool = False, seed: int | None = None,
                 device: str = "cpu", arg_names: list[str] | None = None) -> None:  # fmt: skip
        self.module = module
        self.scheme = scheme_of(module)
        self.params = params(module, insecure=insecure)
        self.seed = seed
        self.device = device
        self._contexts: dict[str, Any] = {}
        #: Each scheme op's source location by its line in the module (``heir.compile`` finds
        #: them: ``ren.interop.heir.locations``); a region's name gives it where known.
        self.locations: dict[int, str] = {}
        self._lock = threading.Lock()
        self.functions = module.functions()
        self.entry, self.encrypts, self.decrypts, self.zeros, self.arity = self._roles()
        self.arg_names = list(arg_names) if arg_names else self._names()
        if len(self.arg_names) != self.arity:
            raise ValueError(f"arg_names names {len(self.arg_names)} of {self.arity} arguments")

    @property
    def context(self) -> Any:
        """Ren's context of the program's chain on its device, its keys made on first use."""
        return self.context_on(self.device)

    def context_on(self, device: str) -> Any:
        """The program's context on ``device`` (made on first use, with the program's seed)."""
        with self._lock:  # one context a device, however many threads ask at once
            if device not in self._contexts:
                kind = {"ckks": ckks, "bgv": bgv, "bfv": bfv}[self.scheme]
                ctx = kind.Context(self.params, seed=self.seed, device=device)
                ctx.keygen()
                self._contexts[device] = ctx
            return self._contexts[device]

    def _roles(self) -> tuple[str, dict[int, str], dict[int, str], dict[int, str], int]:
        entry, arity = None, 0
        tables: dict[str, dict[int, str]] = {
            "client.encrypt": {}, "client.decrypt": {}, "client.encrypt_zero": {}
        }  # fmt: skip
        for name, f in self.functions.items():
            info = f.attr("heir.interface") or {}
            roles = info.get("roles", [])
            given = info.get("index", 0)
            index = int(given.value if isinstance(given, Typed) else given)
            if "entry" in roles:
                entry, arity = name, len(info.get("input_types", []))
            for role, table in tables.items():
                if role in roles:
                    table[index] = name
        if entry is None:
            raise MlirError("the module has no function of role 'entry' (heir.interface)")
        t = tables
        return entry, t["client.encrypt"], t["client.decrypt"], t["client.encrypt_zero"], arity

    def _names(self) -> list[str]:
        names = []
        for i in range(self.arity):
            fn = self.encrypts.get(i, "")
            names.append(fn.split("__encrypt__")[-1] if "__encrypt__" in fn else f"arg{i}")
        return names

    # -- heir-py's interface

    def __getattr__(self, key: str) -> Any:
        if key.startswith("encrypt_") and "arg_names" in self.__dict__:
            name = key[len("encrypt_") :]
            if name in self.arg_names:
                return lambda value: self.encrypt(name, value)
        raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")

    def encrypt(self, name: str, value: Any, *, device: str | None = None) -> Encrypted:
        """The secret argument ``name`` packed and encrypted by the client's function.

        Raises:
            ValueError: an argument the function does not have, or one that is not secret.
        """
        if name not in self.arg_names:
            raise ValueError(f"the function has no argument {name!r}: {self.arg_names}")
        index = self.arg_names.index(name)
        if index not in self.encrypts:
            raise ValueError(f"argument {name!r} is not secret: pass it to eval as it is")
        run = self._run(device)
        out = run.call(self.encrypts[index], [np.asarray(value), "pk"])[0]
        return Encrypted.of(name, out)

    def encrypt_zeros(self, *, device: str | None = None) -> tuple[Encrypted, ...]:
        """The encryptions of zero the entry takes (``client.encrypt_zero``), in order."""
        run = self._run(device)
        return tuple(
            Encrypted.of(f"zero{j}", run.call(self.zeros[j], ["pk"])[0]) for j in sorted(self.zeros)
        )

    def eval(
        self, *args: Any, device: str | None = None, zeros: tuple[Encrypted, ...] | None = None
    ) -> Any:
        """The entry function on encrypted (``encrypt_<name>``) and plain arguments.

        Returns the encrypted result (an ``Encrypted``; a tuple for several results; a result the
        entry computes in the clear as it is). ``zeros``: the encryptions of zero the entry takes
        (``encrypt_zeros()``; made here when ``None``).

        Raises:
            TypeError: a count of arguments other than the function's, a plain value for a
                secret argument, or another argument's encryption in its place.
        """
        if len(args) != self.arity:
            raise TypeError(f"the program takes {self.arity} arguments, got {len(args)}")
        run = self._run(device)
        inputs = []
        for i, (name, a) in enumerate(zip(self.arg_names, args, strict=True)):
            if i in self.encrypts:
                if not isinstance(a, Encrypted):
                    raise TypeError(f"argument {name!r} is secret: pass encrypt_{name}(value)")
                if a.name != name:
                    raise TypeError(f"argument {name!r} got the encryption of {a.name!r}")
                inputs.append(a.value())
            else:
                inputs.append(np.asarray(a) if not np.isscalar(a) else a)
        given = self.encrypt_zeros(device=device) if zeros is None else zeros
        if len(given) != len(self.zeros):
            raise TypeError(
                f"the entry takes {len(self.zeros)} encryptions of zero, got {len(given)}"
            )
        inputs += [z.value() for z in given]
        outs = run.call(self.entry, inputs)
        wrapped = tuple(
            Encrypted.of(f"result{i}", o) if i in self.decrypts else o for i, o in enumerate(outs)
        )
        return wrapped[0] if len(wrapped) == 1 else wrapped

    def jit(self) -> Callable[..., Any]:
        """``eval`` under ``ren.jit``: captured on the first call, replayed on the next ones.

        The encryptions of zero the entry takes are made before each call, outside the capture (a
        jitted function encrypts nothing). The arguments are the encrypted ones; a plain argument
        is part of the plan's key, so close over one in a function of your own instead.
        """
        inner = ren_jit(self._eval_given)

        def run(*args: Any) -> Any:
            return inner(tuple(args), self.encrypt_zeros())

        return run

    def _eval_given(self, args: tuple[Any, ...], zeros: tuple[Encrypted, ...]) -> Any:
        return self.eval(*args, zeros=zeros)

    def decrypt_result(self, result: Any, *, device: str | None = None) -> Any:
        """``eval``'s result decrypted and decoded, shaped like the function's result."""
        results = result if isinstance(result, tuple) else (result,)
        run = self._run(device)
        out = [
            run.call(self.decrypts[i], [r.value(), "sk"])[0]
            if isinstance(r, Encrypted)
            else self._plain_result(i, r)
            for i, r in enumerate(results)
        ]
        return out[0] if len(out) == 1 else tuple(out)

    def __call__(self, *args: Any, device: str | None = None) -> Any:
        """The function on ``args``: encrypted, computed on Ren (on ``device``) and decrypted."""
        if len(args) != self.arity:
            raise TypeError(f"the program takes {self.arity} arguments, got {len(args)}")
        enc = [
            self.encrypt(name, a, device=device) if i in self.encrypts else a
            for i, (name, a) in enumerate(zip(self.arg_names, args, strict=True))
        ]
        return self.decrypt_result(self.eval(*enc, device=device), device=device)

    def cleartext(self, *args: Any) -> Any:
        """The same module on ``args``, every scheme op on plain slot vectors (no key, no noise).

        The reference an encrypted run is checked against (``ren.interop.heir.diverge``).
        """
        return self.run_clear(list(args))

    # -- runs

    def clear_engine(self) -> ClearCkks:
        """The cleartext engine of the program's scheme and ring."""
        if self.scheme == "ckks":
            return ClearCkks(self.params.slots)
        return ClearInt(self.params.n, getattr(self.params, "t", 0))

    def _run(self, device: str | None, trace: list[Any] | None = None) -> _Run:
        return _Run(self, engine_for(self.context_on(device or self.device)), trace)

    def run_clear(self, args: list[Any], trace: list[Any] | None = None) -> Any:
        """The whole function in cleartext (its scheme ops noted in ``trace`` when given)."""
        if len(args) != self.arity:
            raise TypeError(f"the program takes {self.arity} arguments, got {len(args)}")
        return self._whole(_Run(self, self.clear_engine(), trace), args)

    def run_traced(self, args: list[Any], trace: list[Any], device: str | None = None) -> Any:
        """The whole function encrypted, each scheme op's result noted in ``trace``."""
        if len(args) != self.arity:
            raise TypeError(f"the program takes {self.arity} arguments, got {len(args)}")
        return self._whole(self._run(device, trace), args)

    def _whole(self, run: _Run, args: list[Any]) -> Any:
        inputs = [
            run.call(self.encrypts[i], [np.asarray(a), "pk"])[0] if i in self.encrypts else a
            for i, a in enumerate(args)
        ]
        inputs += [run.call(self.zeros[j], ["pk"])[0] for j in sorted(self.zeros)]
        outs = run.call(self.entry, inputs)
        results = [
            run.call(self.decrypts[i], [o, "sk"])[0]
            if i in self.decrypts
            else self._plain_result(i, o)
            for i, o in enumerate(outs)
        ]
        return results[0] if len(results) == 1 else tuple(results)

    def slots_of(self, value: Any, device: str | None = None) -> np.ndarray | None:
        """The slots a traced value holds: decrypted (a ciphertext) or as is (cleartext)."""
        if isinstance(value, Slots):
            return np.asarray(value.values)
        if isinstance(value, ckks.Ciphertext | bgv.Ciphertext | bfv.Ciphertext):
            engine: Any = engine_for(self.context_on(device or self.device))
            return np.asarray(engine.decrypt(value).slots)
        return None

    def _plain_result(self, i: int, value: Any) -> Any:
        """A result the entry computes in the clear, shaped as the function's (not packed)."""
        info = self.functions[self.entry].attr("heir.interface") or {}
        types = info.get("result_types", [])
        t = tensor_type(str(getattr(types[i], "text", types[i]))) if i < len(types) else None
        if t is None or not isinstance(value, np.ndarray) or value.shape == t.shape:
            return value
        count = int(np.prod(t.shape))
        if value.size < count:
            raise MlirError(f"result {i}: {value.size} values for a {t.shape} tensor")
        return value.ravel()[:count].reshape(t.shape)  # HEIR packs a tensor row-major from slot 0

    def op_counts(self) -> dict[str, int]:
        """The scheme ops the entry function holds, by name (as written: a loop's body once)."""
        counts: dict[str, int] = {}
        seen: set[str] = set()
        todo = [self.entry]
        while todo:  # the entry and the functions it calls (HEIR's preprocessing is one)
            name = todo.pop()
            if name in seen or name not in self.functions:
                continue
            seen.add(name)
            for op in self.functions[name].walk():
                if op.name in SHOWN:
                    counts[op.name] = counts.get(op.name, 0) + 1
                elif op.name == "func.call":
                    callee = op.attr("callee")
                    todo.append(getattr(callee, "name", str(callee)))
        return dict(sorted(counts.items()))

    def __repr__(self) -> str:
        return f"<heir.Program {self.entry} ({self.scheme}, n={self.params.n})>"
