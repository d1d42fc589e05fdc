"""HEIR's Python frontend on Ren: ``@heir.compile(scheme="ckks", backend=Ren())``.

heir-py (the ``heir`` extra) compiles a Python function: numba traces it, ``heir-opt`` lowers it
to a scheme's program, and a *backend* makes of that program a client with heir-py's interface
(``heir.interfaces.ClientInterface``). OpenFHE's backend emits C++ and builds it; ``Ren`` reads
the lowered module and runs it on Ren (``ren.interop.heir.load``)::

    from heir import compile
    from heir.mlir import F32, Secret, Tensor
    from ren.interop.heir.frontend import Ren

    @compile(scheme="ckks", backend=Ren(seed=1))
    def f(x: Secret[Tensor[[8], F32]], y: Secret[Tensor[[8], F32]]):
        return x * x - y * y

    f(a, b)                                  # setup, encrypt, eval, decrypt
    f.setup()                                # or step by step: keys,
    ex, ey = f.encrypt_x(a), f.encrypt_y(b)  # heir.interfaces.EncValue, named by argument,
    f.decrypt_result(f.eval(ex, ey))         # f.eval(ey, ex) is refused
    f.original(a, b)                         # the Python function, on NumPy

``f.context`` is Ren's scheme context and ``f.cleartext(a, b)`` the lowered program on NumPy
(any other name goes to the ``Program``, as OpenFHE's client forwards to its module).

The backend imports heir-py only when it is built: this module imports without heir-py or numba
(heir-py's frontend needs both: ``pip install -e .[heir]``), and ``Ren()`` says what is missing.
heir-py reads the function's annotations as types: the module that defines it must not use
``from __future__ import annotations``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ren.interop.heir import api
from ren.interop.heir.ir import Module
from ren.interop.heir.program import Program
from ren.interop.heir.reader import parse
from ren.interop.heir.tools import run_heir_opt

__all__ = ["Client", "Ren"]


def heir_modules() -> tuple[ModuleType, ModuleType]:
    """heir-py's ``heir.interfaces`` and ``heir.backends.util.common``, imported now.

    Raises:
        ImportError: heir-py, numba (its frontend's tracer) or colorama is not installed.
    """
    needed = ("heir", "numba", "colorama")
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"Ren's backend for heir-py's frontend needs {' and '.join(missing)}: "
            "pip install -e .[heir] (heir-py, numba, colorama; x86-64 Linux wheels)"
        )
    return importlib.import_module("heir.interfaces"), importlib.import_module(
        "heir.backends.util.common"
    )


class Ren:
    """A heir-py backend that runs the lowered program on Ren: ``compile(backend=Ren())``.

    ``heir.compile`` calls ``run_backend`` with ``heir-opt``'s output; it returns a ``Client``
    with heir-py's interface. Every scheme heir-py lowers to runs: ``"ckks"``, ``"bgv"`` and
    ``"bfv"``, with heir-py's own pipelines. To see BGV's or BFV's modulus switches as ops, as
    ``ren.interop.heir.compile`` lowers them, give heir-py the pipeline for a backend that
    switches explicitly: ``heir_opt_options=["--canonicalize", "--annotate-module=backend=lattigo
    scheme=bgv", "--mlir-to-bgv=unroll-fhe-kernel-loops=true"]``.

    Args:
        seed: the seed of each ``setup()``'s keys and encryption randomness (the same keys at
            every ``setup()``); ``None``: fresh keys every time.
        device: Ren's device for the ciphertexts (``"cpu"``, ``"cuda"``, ...).
        insecure: accept a chain beyond the HE standard's bound (as Ren's ``Params`` do).

    Raises:
        ImportError: heir-py or numba is not installed (``pip install -e .[heir]``).
    """

    def __init__(self, *, seed: int | None = None, device: str = "cpu", insecure: bool = False):
        interfaces, _ = heir_modules()
        # heir-py checks isinstance(backend, BackendInterface): Ren is an ABC's virtual subclass,
        # registered here, so that importing this module needs no heir-py.
        interfaces.BackendInterface.register(Ren)
        interfaces.ClientInterface.register(Client)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
        if not isinstance(device, str):
            raise TypeError(f"device must be a device's name (str), got {type(device).__name__}")
        self.seed, self.device, self.insecure = seed, device, bool(insecure)

    def __repr__(self) -> str:
        return f"Ren(seed={self.seed!r}, device={self.device!r}, insecure={self.insecure})"

    def load(self, module: Module, arg_names: list[str]) -> Program:
        """``module``'s ``Program`` on Ren, with this backend's seed, device and chain check."""
        return api.load(
            module, arg_names=arg_names, seed=self.seed, device=self.device, insecure=self.insecure
        )

    def run_backend(
        self,
        workspace_dir: str,
        heir_opt: Any,
        heir_translate: Any,
        func_name: str,
        arg_names: list[str],
        secret_args: list[int],
        heir_opt_output: str,
        debug: bool,
    ) -> Client:
        """heir-py's hook: the client of ``heir_opt_output``, the module ``heir-opt`` lowered.

        The module (MLIR's custom syntax, with debug locations) is put in MLIR's generic form
        and read once, and loaded once, so that a module Ren cannot run is refused at compile
        time; each ``setup()`` loads it again, with new keys.

        Raises:
            MlirError: a module Ren does not run (its message names the op or attribute).
        """
        interfaces, _ = heir_modules()
        result = interfaces.CompilationResult(
            module=None, func_name=func_name, arg_names=list(arg_names),
            secret_args=list(secret_args),
        )  # fmt: skip
        text = run_heir_opt(heir_opt_output)
        if debug:
            path = Path(workspace_dir) / f"{func_name}.ren.mlir"
            print(f"HEIRpy Debug (Ren Backend): writing the module Ren reads to {path}")
            path.write_text(text, encoding="utf-8")
        module = parse(text)
        self.load(module, list(arg_names))  # its scheme, chain and roles checked; no keys yet
        return Client(self, result, module)


class Client:
    """A compiled function on Ren, with heir-py's client interface (``ClientInterface``).

    ``setup()`` makes the keys, ``encrypt_<arg>(value)`` encrypts a secret argument as an
    ``EncValue`` named by it, ``eval(*args)`` runs the program on encrypted (secret) and plain
    arguments in order, ``decrypt_result(result)`` decrypts and decodes, and ``f(*args)`` does all
    four; ``original(*args)`` is the Python function. Other names go to the ``Program`` (after
    ``setup()``): ``context``, ``cleartext``, ``params``.
    """

    def __init__(self, backend: Ren, result: Any, module: Module) -> None:
        self.compilation_result = result
        self.func: Any = None  # heir-py's pipeline sets it to the Python function
        self._backend, self._module = backend, module
        self._program: Program | None = None

    def __repr__(self) -> str:
        r = self.compilation_result
        secret = ", ".join(r.arg_names[i] for i in r.secret_args)
        return f"<{r.func_name}({', '.join(r.arg_names)}) on {self._backend!r}, secret: {secret}>"

    @property
    def program(self) -> Program:
        """Ren's ``Program`` of this function, with the keys of the last ``setup()``.

        Raises:
            RuntimeError: before ``setup()``.
        """
        if self._program is None:
            name = self.compilation_result.func_name
            raise RuntimeError(f"call {name}.setup() before {name}.encrypt/eval/decrypt")
        return self._program

    def setup(self) -> None:
        """A fresh ``Program``: new keys (the same ones again with a seed), made on first use.

        Values encrypted before a ``setup()`` belong to the keys before it.
        """
        self._program = self._backend.load(self._module, self.compilation_result.arg_names)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        if key.startswith("encrypt_"):
            return self._encryptor(key[len("encrypt_") :])
        return getattr(self.program, key)

    def _encryptor(self, name: str) -> Callable[[Any], Any]:
        r = self.compilation_result
        if name not in r.arg_names or r.arg_names.index(name) not in r.secret_args:
            secret = [r.arg_names[i] for i in r.secret_args]
            raise AttributeError(
                f"{r.func_name} has no secret argument {name!r} (secret: {secret})"
            )
        encrypt = getattr(self.program, f"encrypt_{name}")
        enc_value = heir_modules()[0].EncValue

        def encrypt_arg(value: Any) -> Any:
            return enc_value(name, encrypt(value))

        encrypt_arg.__name__ = f"encrypt_{name}"
        return encrypt_arg

    def eval(self, *args: Any, **kwargs: Any) -> Any:
        """The program on ``args``: each secret one the ``EncValue`` of its own ``encrypt_``.

        Raises:
            ValueError: a secret argument not an ``EncValue``, or one of another argument
                (``eval(ey, ex)``), or a plain one that is (heir-py's own check).
            TypeError: a count of arguments other than the function's.
        """
        r = self.compilation_result
        if len(args) != len(r.arg_names):
            raise TypeError(f"{r.func_name} takes {len(r.arg_names)} arguments, got {len(args)}")
        common = heir_modules()[1]
        stripped, _ = common.strip_and_verify_eval_arg_consistency(r, *args, **kwargs)
        return self.program.eval(*stripped)

    def decrypt_result(self, result: Any) -> Any:
        """``eval``'s result decrypted: NumPy arrays or scalars shaped like the function's."""
        return self.program.decrypt_result(result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``setup()``, encrypt each secret argument, ``eval``, ``decrypt_result``.

        Arguments go by position or by name, as to the Python function.

        Raises:
            TypeError: a missing, extra or unknown argument.
        """
        self.setup()
        r = self.compilation_result
        given = _positional(r.func_name, r.arg_names, args, kwargs)
        encrypted = [
            getattr(self, f"encrypt_{r.arg_names[i]}")(a) if i in r.secret_args else a
            for i, a in enumerate(given)
        ]
        return self.decrypt_result(self.eval(*encrypted))

    def original(self, *args: Any, **kwargs: Any) -> Any:
        """The Python function itself, on cleartext values."""
        if self.func is None:
            raise ValueError("Function not initialized")
        return self.func(*args, **kwargs)


def _positional(func: str, names: list[str], args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    """``args`` then ``kwargs`` in the order of ``names``: each argument once."""
    if len(args) > len(names):
        raise TypeError(f"{func} takes {len(names)} arguments, got {len(args)}")
    out = dict(zip(names, args, strict=False))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{func} has no argument {name!r} (its arguments: {names})")
        if name in out:
            raise TypeError(f"{func} got argument {name!r} twice")
        out[name] = value
    missing = [n for n in names if n not in out]
    if missing:
        raise TypeError(f"{func} misses argument(s) {missing}")
    return [out[n] for n in names]
