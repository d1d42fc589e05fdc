"""Ren as an oracle for other libraries and standards: their data in, Ren's words compared.

* ``ren.interop.words``: words to compare from NumPy files, SEAL's or Ren's bytes, with their
  moduli (``python -m ren.testing compare A B`` compares two of them), each file's size and
  header checked before it is read;
* ``ren.interop.seal_format``, ``ren.interop.seal`` (with ``seal_stream``, a SEAL object's header,
  compression and a cursor that inflates no further than it reads, and ``seal_values``, the values,
  the parameters and SEAL's checks): Microsoft SEAL's saved ciphertexts, plaintexts and keys, read
  and written in pure Python, and SEAL's decryption, multiply, relinearization, rescale and
  rotation recomputed with its conventions, word for word;
* ``ren.interop.openfhe_format``, ``ren.interop.openfhe`` (with ``openfhe_cereal`` and
  ``openfhe_values``, the values and OpenFHE's rules for them): OpenFHE's CKKS ciphertexts and
  keys read from its JSON in pure Python, its evaluation form mapped to Ren's NTT, its decryption
  word for word;
* ``ren.interop.mlkem``, ``ren.interop.mldsa``: the polynomial arithmetic of the NIST
  post-quantum standards (FIPS 203 ML-KEM, FIPS 204 ML-DSA) on Ren's NTT, and their key
  generation from a seed, checked against the official ACVP vectors.

``docs/guides/conventions.md`` says where other libraries' conventions differ from Ren's (NTT
root and order, slot order, key switching, rescaling, storage), and which option of Ren, or which
conversion of ``python -m ren.testing compare``, follows theirs.
"""
