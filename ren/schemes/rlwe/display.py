"""The notebook displays every RLWE scheme shares: a ciphertext's and a parameter set's.

``RlweCiphertext._repr_html_`` and ``Chain._repr_html_`` call these; a scheme adds its own rows
(CKKS its scale and predicted precision, BFV and BGV their plaintext modulus and predicted noise
budget) through ``_display_rows()``. Nothing here decrypts, reads a key or computes a value: a
ciphertext shows its level, its moduli and what the noise model predicts, never its slots, so a
display is safe in a context that holds the secret key (``ren.display``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ren.display import box, fields, table
from ren.ir.region import region_of
from ren.schemes.rlwe.security import SECURITY_BOUNDS

if TYPE_CHECKING:
    from ren.schemes.rlwe.context import RlweContext
    from ren.schemes.rlwe.params import Chain
    from ren.schemes.rlwe.values import RlweCiphertext

__all__ = ["chain_html", "ciphertext_html", "context_html"]


def _scheme(value: object) -> str:
    """``ckks``, ``bfv`` or ``bgv``: the scheme of a ciphertext or parameter set."""
    params = getattr(value, "params", value)
    return str(getattr(params, "scheme", "") or type(value).__module__.split(".")[2])


def ciphertext_html(ct: RlweCiphertext) -> str:
    """A ciphertext's display: its scheme, level, parts and ring, the scheme's rows, its region.

    The region is the one its parts were made in (``ren.ir.region``), for a lazy ciphertext.
    """
    first = ct.parts[0]
    ring = first.ring
    bits = " + ".join(str(q.bit_length()) for q in ring.moduli)
    rows: list[tuple[str, object]] = [
        ("level", f"{ct.level} ({ring.L} moduli: {bits} bits)"),
        ("parts", f"{ct.size} polynomials of n = {ring.n}, {first.domain.value} form"),
        ("value", "stored" if all(p.realized for p in ct.parts) else "lazy: computed when needed"),
    ]
    try:
        rows += ct._display_rows()
    except ValueError as e:  # a prediction refused (a value it cannot estimate): said, not raised
        rows.append(("note", str(e)))
    # a stored part's node is the buffer its realization made, in whatever region read it
    region = () if first.realized else region_of(first.node)
    if region:
        rows.append(("made in region", "/".join(region)))
    if ct.key_fingerprint is not None:
        rows.append(("keys", f"fingerprint {ct.key_fingerprint}"))
    return box(f"{_scheme(ct).upper()} ciphertext", fields(rows))


def chain_html(chain: Chain) -> str:
    """A parameter set's display: its arguments, then the modulus chain as a table.

    One row per modulus, ciphertext moduli first (level ``i`` keeps ``q_0 .. q_i``) and the
    special moduli after, with its bits and role; then ``log2 QP`` against the HE standard's
    bound for ``n``.
    """
    bound = SECURITY_BOUNDS.get(chain.n)
    if chain.insecure:
        security = "insecure=True: no security claimed (tests, teaching)"
    elif bound is None:
        security = f"no HE standard bound at n = {chain.n}"
    else:
        security = f"128-bit (HE standard: log2 QP at most {bound} at n = {chain.n})"
    rows: list[tuple[str, object]] = [
        ("n", chain.n),
        ("levels", f"{chain.max_level + 1} (0 .. {chain.max_level})"),
        ("log2 QP", f"{chain.log2_qp:.1f}"),
        ("security", security),
        ("key switching", f"{chain.key_switching}, {len(chain.digits)} digits"),
        *getattr(chain, "_display_rows", list)(),
    ]
    moduli = [
        (f"q_{i}", q, q.bit_length(), f"level {i}" if i else "level 0 (the last kept)")
        for i, q in enumerate(chain.q_moduli)
    ]
    moduli += [(f"p_{j}", p, p.bit_length(), "special") for j, p in enumerate(chain.p_moduli)]
    chain_table = table(("", "modulus", "bits", "role"), moduli, caption="the modulus chain")
    return box(f"{_scheme(chain).upper()} parameters", fields(rows), chain_table)


def context_html(ctx: RlweContext) -> str:
    """A context's display: its device and the keys it holds, by name, then its parameters.

    Which keys, never their words: whether it holds the secret key (it can decrypt) or only
    evaluation keys, the relinearization key, and the rotations (Galois elements) with keys made.
    """
    keys = ctx.keychain
    if keys.secret is not None:
        held = "the secret key: it can decrypt (export_secret_key writes it; no display shows it)"
    elif keys.public is not None:
        held = "evaluation keys only: it cannot decrypt"
    else:
        held = "no keys yet"
    galois = sorted(keys.galois)
    rows: list[tuple[str, object]] = [
        ("device", ctx.device),
        ("keys", held),
        ("relinearization key", "made" if keys.relin is not None else "not made"),
        ("Galois keys", f"{len(galois)}: {galois[:12]}{' ...' if len(galois) > 12 else ''}"),
    ]
    if keys.fingerprint is not None:
        rows.append(("fingerprint", keys.fingerprint))
    return box(f"{_scheme(ctx.params).upper()} context", fields(rows), chain_html(ctx.params))
