"""Homomorphic encryption schemes written on top of ``Poly``.

``ren.schemes.ckks`` is CKKS (encrypted approximate arithmetic on complex vectors). Every operation
of a scheme is a ``Poly`` graph, so the scheduler fuses and plans whole homomorphic programs.
"""

__all__ = ["ckks"]
