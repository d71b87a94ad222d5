"""Per-CTA tensor-memory column allocator: tcgen05.alloc / dealloc / relinquish_alloc_permit.

Spec (9.7.16.1.2, 9.7.16.7.1): the unit of allocation is 32 columns, all 128 lanes; nCols is a
power of 2 in [32, 512]; "the number of columns allocated should not increase between any two
allocations in the execution order within the CTA"; alloc *blocks* while the request cannot be
met; dealloc's taddr must point to a previous allocation (with its nCols); after
relinquish_alloc_permit any alloc by the CTA is illegal; everything allocated must be deallocated
before the kernel exits.

Placement (the spec does not say where an allocation lands): the lowest free column that is a
multiple of nCols (natural alignment; with non-increasing sizes this never fragments). The returned
address has lane 0. cta_group::2: the executor keeps one allocator per CTA and calls both with the
same request (both CTAs' warps allocate collectively).
"""

from __future__ import annotations

from dataclasses import dataclass, field

COLS = 512


class WouldBlock:
    """Returned by ``alloc`` when the request cannot be met now (the instruction blocks)."""

    def __repr__(self) -> str:
        return "WOULD_BLOCK"


WOULD_BLOCK = WouldBlock()


@dataclass
class TmemAllocator:
    """Column allocator of one CTA. Errors raise ``ValueError`` with a one-line message."""

    allocations: dict[int, int] = field(default_factory=dict)  # start column -> ncols
    permit: bool = True
    last_ncols: int | None = None
    enforce_non_increasing: bool = True

    @staticmethod
    def check_ncols(ncols: int, op: str) -> int:
        n = int(ncols)
        if n < 32 or n > COLS or n & (n - 1):
            raise ValueError(f"{op}: nCols = {n} must be a power of 2 in [32, 512]")
        return n

    def alloc(self, ncols: int) -> int | WouldBlock:
        """TMEM address (lane 0, column base) of a new allocation, or ``WOULD_BLOCK``."""
        n = self.check_ncols(ncols, "tcgen05.alloc")
        if not self.permit:
            raise ValueError("tcgen05.alloc: after tcgen05.relinquish_alloc_permit (9.7.16.7.1)")
        if self.enforce_non_increasing and self.last_ncols is not None and n > self.last_ncols:
            raise ValueError(f"tcgen05.alloc: nCols = {n} increases over the previous allocation's "
                             f"{self.last_ncols} (9.7.16.7.1)")
        for start in range(0, COLS, n):
            if all(start + n <= s or s + c <= start for s, c in self.allocations.items()):
                self.allocations[start] = n
                self.last_ncols = n
                return start  # lane 0
        return WOULD_BLOCK

    def dealloc(self, taddr: int, ncols: int) -> None:
        n = self.check_ncols(ncols, "tcgen05.dealloc")
        a = int(taddr) & 0xFFFFFFFF
        lane, col = a >> 16, a & 0xFFFF
        if lane != 0 or col not in self.allocations:
            raise ValueError(f"tcgen05.dealloc: taddr {a:#010x} is not the address of a live allocation")
        if self.allocations[col] != n:
            raise ValueError(f"tcgen05.dealloc: nCols = {n} but the allocation at column {col} has "
                             f"{self.allocations[col]}")
        del self.allocations[col]

    def relinquish_alloc_permit(self) -> None:
        self.permit = False

    def leaks(self) -> list[tuple[int, int]]:
        """Live (start column, ncols) allocations, sorted."""
        return sorted(self.allocations.items())

    def check_exit(self) -> None:
        """At kernel exit: every allocation must have been deallocated (9.7.16.1.2)."""
        if self.allocations:
            s, c = self.leaks()[0]
            raise ValueError(f"kernel exit with {len(self.allocations)} TMEM allocation(s) not deallocated "
                             f"(first: column {s}, {c} columns)")
