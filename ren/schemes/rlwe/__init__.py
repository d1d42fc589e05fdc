"""The RLWE core every scheme shares: what is not CKKS (or BFV, or BGV) in an RLWE scheme.

``params`` holds the HE standard's security bounds and the checks of a parameter set's chain and
error; ``keys`` the key-switching keys; ``keygen`` the making and keeping of a context's keys (a
mixin); ``encrypt`` encryption of zero and decryption of RLWE pairs; ``keyswitch`` key switching
as a part a context holds (hybrid: ModUp first so that every automorphism of one ciphertext part
reuses it); ``active`` each scheme's current contexts per thread (one context variable per
scheme); ``bytes`` the versioned, checksummed format every value is written in; ``keyset`` the
evaluation keys a server is given and the exported secret key (written, read and checked). A
scheme (``ren.schemes.ckks``, ``ren.schemes.integer``) adds its encoding, its values and its
evaluator.
"""
