"""What can go wrong when the VM executes a kernel, as exceptions the runtime turns into outcomes.

Why distinct classes: a conformance verdict must never rest on a kernel that misbehaved, and a
validation engineer must see *where* it misbehaved. ``VmTimeout`` (a deadlock, a bounded wait that
can never complete, the step budget) becomes the case status ``timeout``; every other
``VmError`` becomes ``error``. Each message is one line and names the instruction (source line and
text), the thread (CTA and thread index) and, for memory faults, the address -- the way
compute-sanitizer reports a fault.
"""

from __future__ import annotations


class VmError(RuntimeError):
    """The kernel did something the PTX ISA forbids, or something the VM does not implement."""

    kind = "error"


class VmUnsupported(VmError):
    """An instruction, qualifier or directive the VM does not implement: never skipped silently."""

    kind = "unsupported"


class VmMemoryFault(VmError):
    """Out-of-bounds or misaligned access to global, shared, param or tensor memory."""

    kind = "memory"


class VmHazard(VmError):
    """A race the PTX memory model leaves undefined: reading an asynchronous result before its
    completion was observed, a missing fence between the generic and the async proxy, ..."""

    kind = "hazard"


class VmTimeout(VmError):
    """The kernel cannot make progress (deadlock) or exceeded its step budget."""

    kind = "timeout"
