"""Many ciphertexts, many machines: a saved plan replayed over a stream of items by workers.

``ren.dist.map(plan, items, stored={"keys": keys}, engine="ray" | "local")`` sends every item (a
value's bytes) through the saved plan (``f.save(path)``) on workers that load the plan and the
evaluation keys once, and returns each result's bytes in order, or an ``ItemError`` in the place
of an item that failed. ``imap`` streams; ``Pool`` keeps the workers for several runs. The
guide "Many ciphertexts, many machines" says how it scales; ``python -m ren.dist`` runs it on
files.
"""

from ren.dist.api import ENGINES, Pool, imap, map
from ren.dist.driver import ItemError

__all__ = ["ENGINES", "ItemError", "Pool", "imap", "map"]
