"""The notebook displays of ciphertexts and parameter sets (``ren.schemes.rlwe.display``).

Oracles: the parameters' own moduli (bits by ``int.bit_length``), the noise model's predictions
as the public functions give them, and, for safety, the decrypted slots and the secret key's
words, none of which may appear in any display.
"""

from __future__ import annotations

import re

import numpy as np

import ren
from ren.schemes import bfv, bgv, ckks
from tests.test_display import cells, offline

CKKS = ckks.Params(n=64, q_bits=(50, 30, 30), p_bits=(50,), scale_bits=30, insecure=True)
BFV = bfv.Params(n=64, q_bits=(50, 50), p_bits=(55,), t=257, insecure=True)


def test_ckks_parameters_show_the_chain():
    html = CKKS._repr_html_()
    offline(html)
    for i, q in enumerate(CKKS.q_moduli):
        assert cells(html, f"q_{i}")[:2] == [str(q), str(q.bit_length())]
    for j, p in enumerate(CKKS.p_moduli):
        assert cells(html, f"p_{j}") == [str(p), str(p.bit_length()), "special"]
    assert cells(html, "log2 QP") == [f"{CKKS.log2_qp:.1f}"]
    assert cells(html, "levels") == ["3 (0 .. 2)"] and cells(html, "scale") == ["2^30"]
    assert "insecure=True" in cells(html, "security")[0]
    secure = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,))
    assert cells(secure._repr_html_(), "security") == [
        "128-bit (HE standard: log2 QP at most 218 at n = 8192)"
    ]


def test_a_ckks_ciphertext_shows_level_scale_and_prediction_not_its_slots():
    values = np.array([0.123456789, -0.987654321, 0.55555555]) + 0.31415926j
    with ckks.Context(CKKS, seed=1) as ctx:
        ct = ckks.encrypt(values)
        product = ct * ct
        html = product._repr_html_()
        offline(html)
        assert not product.parts[0].realized  # the display ran nothing
        assert cells(html, "level")[0].startswith("1 (2 moduli: 50 + 30 bits)")
        assert cells(html, "predicted precision") == [
            f"{ckks.predicted_precision(product):.1f} bits (the noise model, nothing run)"
        ]
        assert cells(html, "scale") == [ckks.params.scale_text(product.scale)]
        assert cells(html, "made in region") == ["multiply/rescale"]
        with ren.region("elsewhere"):
            product.realize()
        assert ">made in region<" not in product._repr_html_()  # a stored value: no region
        secret_free(ctx, [product, ct.realize(), CKKS], values, ckks.decrypt(product))


def test_a_bfv_ciphertext_shows_its_predicted_noise_budget():
    with bfv.Context(BFV, seed=3) as ctx:
        ct = bfv.encrypt([11, 22, 33])
        html = ct._repr_html_()
        offline(html)
        assert cells(html, "predicted noise budget") == [
            f"{bfv.predicted_noise_budget(ct):.1f} bits (the noise model, nothing run)"
        ]
        assert cells(html, "t") == ["257"]
        assert cells(BFV._repr_html_(), "t") == ["257 (9 bits): 64 slots (batching)"]
        secret_free(ctx, [ct, (ct * ct).realize(), BFV], np.array([11, 22, 33]), None)


def test_a_bgv_ciphertext_has_a_display_too():
    params = bgv.Params(n=64, q_bits=(50, 50), p_bits=(55,), t=257, insecure=True)
    with bgv.Context(params, seed=3):
        html = bgv.encrypt([5, 6]).realize()._repr_html_()
    assert html.count("<b>BGV ciphertext</b>") == 1 and "predicted noise budget" in html


def secret_free(ctx, shown, values, decrypted) -> None:
    """No display of ``shown`` holds a slot value or a word of the context's secret key.

    The slots are looked for as the first five significant characters of each value (and of
    each decrypted value), the key as each of its stored words of 8 digits or more.
    """
    texts = [obj._repr_html_() for obj in shown] + [repr(ctx), *(repr(obj) for obj in shown)]
    secret = ctx.keychain.require_secret("test the displays")
    words = {str(int(w)) for w in np.asarray(secret.words()).ravel() if int(w) >= 10**7}
    slots = {f"{abs(v):.4f}"[:6] for v in np.ravel([np.real(values), np.imag(values)]) if v}
    if decrypted is not None:
        slots |= {f"{abs(v):.4f}"[:6] for v in np.ravel([np.real(decrypted)]) if abs(v) > 1e-3}
    for text in texts:
        numbers = set(re.findall(r"\d+", text))
        assert not words & numbers, "a secret key word is in a display"
        for slot in slots:
            assert slot not in text, f"a slot value ({slot}) is in a display"


def test_a_context_shows_which_keys_it_holds_not_their_words():
    values = np.array([0.123456789, -0.987654321])
    with ckks.Context(CKKS, seed=1) as ctx:
        ctx.rotation_key(1)
        html = ctx._repr_html_()
        offline(html)
        assert cells(html, "keys")[0].startswith("the secret key: it can decrypt")
        assert cells(html, "relinearization key") == ["made"]
        assert cells(html, "Galois keys") == [f"1: [{pow(5, 1, 2 * CKKS.n)}]"]
        assert cells(html, "fingerprint") == [ctx.key_fingerprint]
        assert cells(html, "q_0")[0] == str(CKKS.q_moduli[0])  # the parameters below
        ct = ckks.encrypt(values).realize()
        secret_free(ctx, [ctx, ct], values, ckks.decrypt(ct))
        public = ckks.Context(CKKS, keys=ctx.evaluation_keys())
    shown = public._repr_html_()
    assert cells(shown, "keys") == ["evaluation keys only: it cannot decrypt"]


def test_the_viz_displays_of_a_program_show_no_secret():
    """A trace's displays and the notebook debugger's steps, in a context holding the secret
    key, hold no slot value and no word of the key (the debugger steps the parts, not a watched
    ciphertext: watching is asking for the slots)."""
    import ren.viz
    from ren.display import Display
    from ren.viz.debug import notebook

    values = np.array([0.123456789, -0.987654321, 0.55555555]) + 0.31415926j
    with ckks.Context(CKKS, seed=1) as ctx:
        ct = ckks.encrypt(values).realize()
        with ren.viz.record() as trace:
            with ren.region("square"):
                y = (ct * ct).rotate(1)
            ren.realize(*y.parts)
        shown: list[object] = [trace, trace.memory()]
        shown += [trace.before_after(name) for name in trace.passes]
        z = (ct * ct).rotate(1)
        dbg = notebook(*z.parts, widgets=False)
        shown += [dbg.overview(), dbg.regions(), *dbg.steps(), dbg.finish()]
        assert all(isinstance(s, Display) for s in shown[1:] if s is not dbg)
        assert dbg.done and z.parts[0].realized
        secret_free(ctx, shown, values, ckks.decrypt(z))
