"""CKKS is a package of modules, but its values pickle and show under ``ren.schemes.ckks``.

The oracle: the module names a pickle stream records (read back with ``pickletools``), which must
be the package's, so pickles keep their bytes whatever module of the package holds the code.
"""

from __future__ import annotations

import pickle
import pickletools

import numpy as np

from ren.schemes import ckks

PARAMS = ckks.Params(n=64, q_bits=(60, 40), p_bits=(60,), scale_bits=40, insecure=True)


def modules_named(blob: bytes) -> set[str]:
    """The module strings of a protocol-4 pickle: each ``STACK_GLOBAL`` reads two pushed strings."""
    strings = [arg for op, arg, _ in pickletools.genops(blob) if op.name == "SHORT_BINUNICODE"]
    return {s for s in strings if s.startswith("ren.")}


def test_values_pickle_under_the_package_name():
    with ckks.Context(PARAMS, seed=1) as ctx:
        ct = ckks.encrypt([0.5, -1.0])
        values = [ct, ckks.encode([1.0]), ctx.evaluation_keys(), PARAMS]
        for value in values:
            blob = pickle.dumps(value, protocol=4)
            assert modules_named(blob) == {"ren.schemes.ckks"}, type(value).__name__
        back = pickle.loads(pickle.dumps(ct, protocol=4))
        assert ckks.precision_bits(ckks.decrypt(back)[:2], np.array([0.5, -1.0])) > 20


def test_every_public_class_says_it_is_in_the_package():
    for name in (
        "Params",
        "Plaintext",
        "Ciphertext",
        "CiphertextView",
        "EvaluationKeys",
        "Context",
    ):
        assert getattr(ckks, name).__module__ == "ren.schemes.ckks", name
