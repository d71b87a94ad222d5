"""The instruction-handler registry: which Python function executes which PTX opcode.

Why its own module: the machine looks handlers up and the instruction families (``ops_*``) register
them. With the table inside the machine, the machine had to import a family to get it registered while
that family imported the machine (a file cycle). Here the table sits below both: the machine reads it,
each family registers into it on import, and the runtime imports the families before it builds a
machine (:mod:`mmacts.ptxvm.runtime`), so every arrow points down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mmacts.ptxvm.parse import Instr
from mmacts.ptxvm.ptxtypes import is_type

if TYPE_CHECKING:  # the handler signature names the machine; the machine imports this module
    from mmacts.ptxvm.machine import Machine

Handler = Callable[["Machine", Instr, np.ndarray], "bool | None"]
HANDLERS: dict[str, Handler] = {}
"""Handler name -> handler: an opcode base (``mov``), a dotted prefix (``bar.warp``, ``tcgen05.ld``) or a
base with a type (``mov.b128``); :func:`handler_names` says which one an instruction gets (most specific).
A handler executes ``ins`` for the active threads and returns True when it set their PCs."""


def handler(*names: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of every name in ``names``."""

    def deco(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn

    return deco


def handler_names(parts: tuple[str, ...]) -> list[str]:
    """The handler names an instruction may be registered under, most specific first: every dotted
    prefix of the opcode from the longest down to two parts (``bar.warp.sync``, ``bar.warp``), then
    the base with the opcode's last part where that is a type (``ld.b128``), then the base (``bar``). Why the
    order matters: looking up the base first sent ``bar.warp.sync`` to the CTA barrier, and every
    CUTLASS kernel deadlocked (issue 23)."""
    names = [".".join(parts[:k]) for k in range(len(parts), 1, -1)]
    if len(parts) > 2 and is_type(parts[-1]):  # a type only: "barrier.cluster.arrive" is no "barrier.arrive"
        names.append(f"{parts[0]}.{parts[-1]}")
    names.append(parts[0])
    return names
