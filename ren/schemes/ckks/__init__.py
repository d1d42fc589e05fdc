"""CKKS: encrypted approximate arithmetic on vectors of complex numbers, written with ``Poly``.

Every homomorphic operation here is a handful of ``Poly`` operations (products, sums, rotations,
basis extensions, rescales), so one encrypted multiply is one lazy graph that Ren's scheduler
fuses, plans and runs on any backend, and that ``ren.jit`` captures whole.

Use::

    from ren.schemes import ckks

    params = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40)
    with ckks.Context(params, seed=1) as ctx:  # keys are made here
        x = ckks.encrypt([0.5, 0.25j, -1.0])
        y = x * x + x  # relinearized and rescaled; x is brought to y's level and scale
        print(ckks.decrypt(y)[:3])

The conventions (``docs/ckks.md`` explains each):

* **Slots.** ``n/2`` complex slots; slot ``j`` is the plaintext polynomial evaluated at
  ``zeta^(5^j)``, ``zeta = exp(i*pi/n)``, so ``rotate(r)`` moves slot ``j + r`` to slot ``j`` and
  conjugation is the automorphism ``X -> X^(2n-1)``.
* **Moduli.** The ciphertext modulus chain is ``q_0, ..., q_{L-1}`` (``q_bits``); the special
  moduli ``p_0, ...`` (``p_bits``) are used only inside key switching. Keys live in the ring over
  ``p_0, ..., q_0, ..., q_{L-1}`` (special moduli *first*), so the key ring at every level is a
  contiguous run of it (a view, no copy).
* **Levels.** A value at level ``l`` lives in the ring over ``q_0, ..., q_l``; fresh values are at
  level ``L-1``; ``rescale`` divides by ``q_l`` and drops to level ``l-1``.
* **Scales** are tracked exactly, as Python floats: a product's scale is the product of the scales,
  a rescale divides it by the exact modulus.
* **Key switching** is hybrid: the ciphertext is cut into ``dnum`` digits of consecutive moduli,
  each digit is extended to the special moduli (ModUp, a basis extension), multiplied by the key,
  and the sum is divided by ``P`` (ModDown, a ``RESCALE`` by the special moduli).
* **Precision.** ``precision_bits(got, expected)`` is absolute, ``-log2`` of the largest slot
  error (``relative=True``: over ``max |expected|``); the report of ``python -m ren.viz`` and the
  debugger label every figure with what it is measured against. Outside the range a bootstrap or
  a worked function keeps to its precision a value comes back wrong: ``RangeWarning`` says so where
  Ren can tell (``ren.schemes.ckks.ranges``).
* **Sharing.** The secret key leaves a ``Context`` only through ``export_secret_key()``: values
  pickle and copy as their bytes, a context holding a secret key refuses to be pickled or copied,
  and every value made under keys carries the fingerprint of the public key, checked wherever it
  is used. ``with ckks.Context(...)`` sets the current context of the current thread only.

The circuits (``ren.circuits.ckks``, the floor above) are named here too: ``ckks.rotate_many``,
``ckks.LinearTransform``, ``ckks.bootstrap``, ``ckks.BootstrapConfig`` and the rest. This package
never imports them: they register with ``ren.schemes.ckks.registry`` as they load, ``import ren``
loads them, and ``ckks.<name>`` looks the name up there (PEP 562).
"""

from typing import TYPE_CHECKING, Any

from ren.schemes.ckks.active import current
from ren.schemes.ckks.api import (  # the readers older pickles name by this path
    _ciphertext_from_pickle as _ciphertext_from_pickle,
)
from ren.schemes.ckks.api import (
    _context_from_pickle as _context_from_pickle,
)
from ren.schemes.ckks.api import (
    _evaluation_keys_from_pickle as _evaluation_keys_from_pickle,
)
from ren.schemes.ckks.api import (
    _plaintext_from_pickle as _plaintext_from_pickle,
)
from ren.schemes.ckks.api import (
    decode,
    decrypt,
    encode,
    encrypt,
    multiply,
    predicted_precision,
)
from ren.schemes.ckks.ciphertext import Ciphertext, CiphertextView
from ren.schemes.ckks.context import Context
from ren.schemes.ckks.encoding import embed, embed_inverse, precision_bits
from ren.schemes.ckks.keys import EvaluationKeys
from ren.schemes.ckks.params import Params
from ren.schemes.ckks.ranges import RangeWarning
from ren.schemes.ckks.registry import circuit
from ren.schemes.ckks.types import Plaintext
from ren.schemes.rlwe.bytes import FORMAT_VERSION as FORMAT_VERSION
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.params import MIN_SIGMA, SECURITY_BOUNDS

if TYPE_CHECKING:  # for type checkers only: at run time it comes from the registry
    from ren.circuits.ckks.bootconfig import BootstrapConfig

__all__ = [
    "MIN_SIGMA",
    "SECURITY_BOUNDS",
    "BootstrapConfig",
    "Ciphertext",
    "CiphertextView",
    "Context",
    "EvaluationKeys",
    "KeySwitchKey",
    "Params",
    "Plaintext",
    "RangeWarning",
    "current",
    "decode",
    "decrypt",
    "embed",
    "embed_inverse",
    "encode",
    "encrypt",
    "multiply",
    "precision_bits",
    "predicted_precision",
]

#: The circuits (``ren.circuits.ckks``, the floor above), reachable as ``ckks.<name>``: each is
#: what that package registered (``ren.schemes.ckks.registry``); this one never imports it.
#: ``ckks.functions`` is the module of worked functions (``ckks.functions.sigmoid(ct)``, ...).
_CIRCUITS = frozenset(
    {
        "BootstrapConfig",
        "rotate_many",
        "sum_slots",
        "sum_slots_rotations",
        "inner_product",
        "LinearTransform",
        "chebyshev",
        "evaluate_polynomial",
        "evaluate_function",
        "functions",
        "bootstrap",
        "bootstrap_keys",
    }
)


def __getattr__(name: str) -> Any:
    """``ckks.rotate_many`` and the other circuits, as ``ren.circuits.ckks`` registered them."""
    if name not in _CIRCUITS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return circuit(name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_CIRCUITS])


# Values pickle by these names: ``ren.schemes.ckks.Ciphertext``, ``..._ciphertext_from_pickle``,
# as before the package was split, so pickles stay the same bytes whatever module holds the code.
for _public in (
    Ciphertext,
    CiphertextView,
    Context,
    EvaluationKeys,
    Params,
    Plaintext,
    _ciphertext_from_pickle,
    _context_from_pickle,
    _evaluation_keys_from_pickle,
    _plaintext_from_pickle,
):
    _public.__module__ = __name__
del _public
