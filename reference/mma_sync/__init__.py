"""Reference for ``mma.sync ... block_scale`` (sm_120a): fragments, scale metadata, model.

* ``fragments``: A/B/C/D register images per lane (encode/decode).
* ``scales``: scale-a/b-data words and the byte-id/thread-id selector rules (Table 37).
* ``model``: executes the instruction from register images.
* ``recipes``: exact-by-construction data and the register images that carry it.
"""

from reference.mma_sync.model import BlockScaleForm, RegisterImage, execute
from reference.mma_sync.scales import Selectors, all_selectors

__all__ = ["BlockScaleForm", "RegisterImage", "Selectors", "all_selectors", "execute"]
