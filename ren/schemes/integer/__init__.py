"""What BFV and BGV share: integers mod ``t``, batched in slots, on the RLWE core.

``params`` holds the parameters (the chain of ``ren.schemes.rlwe.params`` and the plaintext modulus
``t``), ``batching`` the slots (SEAL's 2 x n/2 matrix, through the NTT mod ``t``), ``types`` the
plaintexts and ciphertexts, ``context`` what the two schemes' contexts have in common (keys,
encryption, rotations, the noise budget), ``api`` the module functions, ``bytes`` and ``keys`` their
byte forms and evaluation keys, ``watch`` how the debugger shows a ciphertext. ``noise`` predicts
a ciphertext's noise budget with no kernel run (its estimates are ``estimate``'s), and ``choose``
finds parameters for a multiplicative depth from that prediction. ``ren.schemes.bfv``
and ``ren.schemes.bgv`` add what differs: where the message sits (scaled by ``Q/t`` at the top, or
under ``t`` times the noise), the product, and BGV's modulus switching.
"""
