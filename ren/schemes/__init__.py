"""Homomorphic encryption schemes written on top of ``Poly``.

``ren.schemes.ckks`` is CKKS (encrypted approximate arithmetic on complex vectors);
``ren.schemes.bfv`` and ``ren.schemes.bgv`` are BFV and BGV (exact arithmetic on integers mod
``t``), sharing ``ren.schemes.integer``. Every operation
of a scheme is a ``Poly`` graph, so the scheduler fuses and plans whole homomorphic programs.
"""

__all__ = ["bfv", "bgv", "ckks"]
