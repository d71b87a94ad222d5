"""The tcgen05.mma operand collector buffers: what ``.collector::<buffer>::<op>`` does to an operand.

Spec (PTX ISA 9.7.16.10.9.1, ``tcgen05.mma`` description, the ``.collector_usage`` table):

  ``.collector::a::fill``    "the A matrix read from the memory should be filled in collector buffer"
  ``.collector::a::use``     "the A matrix can be read from the collector buffer. This requires a
                             previous fill to the collector buffer to be still valid"
  ``.collector::a::lastuse`` "the A matrix can be read from the collector buffer and the contents of
                             the collector buffer can be discarded. This requires a previous fill to
                             the collector buffer to be valid till the collector buffer is read"
  ``.collector::a::discard`` "the contents of the collector buffer for A can be discarded"
  "If no .collector_usage qualifier is specified, then it defaults to .collector::a::discard."
  "It is illegal to specify either of .collector::a::use or .collector::a::fill along with .ashift."

and 9.7.16.10.9.3/.4 (``tcgen05.mma.ws{.sp}``): the same four operations on the B matrix with four
buffers ``::b0`` .. ``::b3``, default ``.collector::b0::discard``.

Model (one :class:`Collector` per CTA; a ``cta_group::2`` MMA uses the collectors of both CTAs,
each holding that CTA's part of the operand):

* ``fill``: the operand is read from memory (shared memory through its descriptor, or tensor
  memory) as usual and a copy of the *values* is kept in the buffer.
* ``use`` / ``lastuse``: the operand is taken from the buffer, memory is not read (so a kernel that
  overwrote the shared-memory tile after the ``fill`` still gets the filled values, as the hardware
  would); ``lastuse`` then invalidates the buffer. Reading a buffer that was never filled, or
  invalidated by ``lastuse``/``discard``, is an error (the spec's "requires a previous fill ... still
  valid"), and so is using it for an MMA of another shape/type than the one that filled it (the
  buffer holds that operand only; the VM's reading).
* ``discard`` (and no qualifier): the operand is read from memory; the buffer is invalidated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OPS = ("fill", "use", "lastuse", "discard")


@dataclass
class Collector:
    """The collector buffers of one CTA: name ("a", "b0".."b3") -> (signature, values)."""

    slots: dict[str, tuple[Any, Any]] = field(default_factory=dict)


def parse_usage(qual: str | None, *, ws: bool) -> tuple[str, str]:
    """(buffer, op) of a ``collector::<buffer>::<op>`` qualifier (None: the default discard)."""
    if qual is None:
        return ("b0" if ws else "a"), "discard"
    parts = qual.split("::")
    if len(parts) != 3 or parts[0] != "collector" or parts[2] not in OPS:
        raise ValueError(f"tcgen05.mma: unknown collector usage .{qual}")
    buf = parts[1]
    allowed = ("b0", "b1", "b2", "b3") if ws else ("a",)
    if buf not in allowed:
        raise ValueError(f"tcgen05.mma{'.ws' if ws else ''}: collector buffer ::{buf} not allowed "
                         f"(allowed {', '.join(allowed)})")
    return buf, parts[2]


def from_buffer(collectors: list[Collector], buf: str, op: str, sig: Any) -> list[Any] | None:
    """The per-CTA operand values a ``use``/``lastuse`` takes (None for ``fill``/``discard``: read memory)."""
    if op not in ("use", "lastuse"):
        return None
    out = []
    for v, c in enumerate(collectors):
        held = c.slots.get(buf)
        if held is None:
            raise ValueError(f"tcgen05.mma .collector::{buf}::{op}: collector buffer {buf} of CTA {v} of the "
                             f"MMA holds nothing valid (no earlier ::fill, or it was ended by ::lastuse/::discard)")
        if held[0] != sig:
            raise ValueError(f"tcgen05.mma .collector::{buf}::{op}: the buffer was filled by an MMA of "
                             f"{held[0]}, this MMA needs {sig}")
        out.append(held[1])
    return out


def after(collectors: list[Collector], buf: str, op: str, sig: Any, values: list[Any]) -> None:
    """Update the buffers once the MMA has its operand: keep it (fill) or invalidate (lastuse/discard)."""
    for v, c in enumerate(collectors):
        if op == "fill":
            c.slots[buf] = (sig, values[v])
        elif op in ("lastuse", "discard"):
            c.slots.pop(buf, None)
