"""The peers suite's case records: each producer's form and run-time fields, declared once (issue 25, item 1).

The suite's cases come from four producers, each with fields of its own; ``peer`` (a field of every form) says
which one made a case, and so which runs it:

- ``triton`` (:mod:`suites.peers.triton_cases`): :class:`TritonForm`, a :class:`TritonConfig` (the kernel
  configuration Triton compiles) with the peer; no run-time fields.
- ``gluon`` (:mod:`suites.peers.gluon_cases`): :class:`GluonForm`, a :class:`GluonConfig` with the peer.
- ``cutlass`` (:mod:`suites.peers.cutlass_peer`): :class:`CutlassForm` (the CUTLASS version the case was listed
  with) and one run-time record per item compared: :class:`IdescRuntime`, :class:`SmemRuntime`,
  :class:`SfRuntime`, :class:`AccRuntime`, :class:`Sm120Runtime` (``item`` names it).
- ``cutlass-example`` (:mod:`suites.peers.cutlass_examples`): :class:`ExampleForm` and the problem it runs,
  :class:`ExampleRuntime` (one M, N, K) or :class:`GroupedRuntime` (one per group).

Why the configurations live here and not beside their compilers: a Triton/Gluon case's form *is* its kernel
configuration plus the peer, so the form record derives from the configuration. The configuration itself stays a
record of its own because the PTX disk cache is keyed by its fields (``triton_cases.cached_compile``): the form's
``peer`` is not part of what Triton compiles, and adding it would miss every cached kernel.

Nothing here imports Triton or CUTLASS: the case list is made without them (the minimum-floor environment).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from mmacts.core.fields import Fields


def mma_kind(fmt_a: str, fmt_b: str, scale: str) -> str:
    """The block-scaled ``.kind`` an operand/scale format triple runs as."""
    if scale == "ue4m3":
        return "mxf4nvf4"
    if fmt_a == fmt_b == "e2m1":
        return "mxf4"
    return "mxf8f6f4"


def _values(record: object, cls: type) -> dict[str, Any]:
    """``record``'s values of the fields of the dataclass ``cls`` (a configuration and its form share them)."""
    return {f.name: getattr(record, f.name) for f in fields(cls)}


class _KernelForm(Fields):
    """The form of a case whose kernel a compiler builds from a configuration (:attr:`CONFIG`): the
    configuration's fields and the ``peer``. Derive with the configuration class first."""

    CONFIG: ClassVar[type]

    @classmethod
    def of_config(cls, cfg: Any) -> Any:
        """The form of the case that runs ``cfg``."""
        return cls(**_values(cfg, cls.CONFIG))

    @property
    def config(self) -> Any:
        """The configuration alone (what the compiler and the PTX cache see)."""
        return self.CONFIG(**_values(self, self.CONFIG))


# ------------------------------------------------------------------------------------------ Triton
@dataclass(frozen=True)
class TritonConfig:
    """One ``tl.dot_scaled`` kernel configuration: what Triton compiles (and the PTX cache's key)."""

    arch: str = "sm_100a"
    fmt_a: str = "e4m3"
    fmt_b: str = "e4m3"
    scale: str = "ue8m0"  # ue8m0 (groups of 32) or ue4m3 (nvfp4, groups of 16)
    bm: int = 128
    bn: int = 128
    bk: int = 128
    load: str = "ptr"  # ptr | tma | tma5p / tma5t (tutorial 10: 5-D preshuffled scales by pointer / by TMA) | chain
    b_major: str = "bK"  # bK (K-major B) | bN (MN-major B)
    num_warps: int = 4
    num_stages: int = 3

    @property
    def group(self) -> int:
        return 16 if self.scale == "ue4m3" else 32

    @property
    def case_id(self) -> str:
        extra = "" if (self.num_warps, self.num_stages) == (4, 3) else f".w{self.num_warps}s{self.num_stages}"
        return (f"peers.triton.{self.arch}.dot_scaled.{self.fmt_a}x{self.fmt_b}.{self.scale}."
                f"bm{self.bm}bn{self.bn}bk{self.bk}.{self.load}.{self.b_major}{extra}")

    @property
    def kind(self) -> str:
        return mma_kind(self.fmt_a, self.fmt_b, self.scale)


@dataclass(frozen=True)
class TritonForm(TritonConfig, _KernelForm):
    """A Triton case's form: its kernel configuration and the peer."""

    CONFIG: ClassVar[type] = TritonConfig
    peer: str = "triton"


# ------------------------------------------------------------------------------------------ Gluon
_FMT_NAME = {("e4m3", "e4m3", "ue8m0"): "mxfp8", ("e2m1", "e2m1", "ue8m0"): "mxfp4",
             ("e4m3", "e2m1", "ue8m0"): "mxfp8xmxfp4", ("e2m1", "e2m1", "ue4m3"): "nvfp4",
             ("e5m2", "e5m2", "ue8m0"): "mxfp8e5m2"}


@dataclass(frozen=True)
class GluonConfig:
    """One kernel configuration; ``bm`` is the cluster's tile (256 for a pair), ``bn`` / ``bk`` likewise."""

    ctas: int = 1  # 1 or 2 (cta_group::2 in a cluster of 2)
    fmt_a: str = "e4m3"
    fmt_b: str = "e4m3"
    scale: str = "ue8m0"  # ue8m0 (groups of 32) | ue4m3 (nvfp4, groups of 16)
    bm: int = 128
    bn: int = 128
    bk: int = 128
    num_warps: int = 4
    sfb_split: bool = False  # 2-CTA: SFB split like B (each CTA its N half) instead of whole in both CTAs
    tiles: tuple[int, int] = (1, 1)  # tiles (clusters) along M and N: more than one checks the tile/rank arithmetic
    # duck-typed fields that triton_cases.make_inputs / expected read
    load: str = "tma5t"
    b_major: str = "bK"

    @property
    def group(self) -> int:
        return 16 if self.scale == "ue4m3" else 32

    @property
    def kind(self) -> str:
        return mma_kind(self.fmt_a, self.fmt_b, self.scale)

    @property
    def case_id(self) -> str:
        fmt = _FMT_NAME.get((self.fmt_a, self.fmt_b, self.scale), f"{self.fmt_a}x{self.fmt_b}.{self.scale}")
        extra = (".sfbsplit" if self.sfb_split else "") + ("" if self.tiles == (1, 1) else
                                                           f".tiles{self.tiles[0]}x{self.tiles[1]}")
        return f"peers.gluon.mma_scaled.cta{self.ctas}.{fmt}.m{self.bm}n{self.bn}k{self.bk}{extra}"


@dataclass(frozen=True)
class GluonForm(GluonConfig, _KernelForm):
    """A Gluon case's form: its kernel configuration and the peer."""

    CONFIG: ClassVar[type] = GluonConfig
    peer: str = "gluon"


# ------------------------------------------------------------------------------------------ CUTLASS (host values)
@dataclass(frozen=True)
class CutlassForm(Fields):
    """A CUTLASS comparison's form: no kernel, the CUTLASS version its values come from."""

    peer: str = "cutlass"
    cutlass: str = "absent"  # the nvidia-cutlass version installed when the case was listed


@dataclass(frozen=True)
class IdescRuntime(Fields):
    """``idesc.*``: the configuration is found in ``idesc.cpp``'s output by its case id."""

    item: str = "idesc"
    id: str = ""


@dataclass(frozen=True)
class SmemRuntime(Fields):
    """``smem.*``: an operand's element container, swizzle (``none`` / ``32B`` / ``64B`` / ``128B`` /
    ``128B_base32B``) and major-ness."""

    item: str = "smem"
    elem: str = "b8"  # b8 | b16 | fp4x2 | p4 | p6
    swizzle: str = "128B"
    major: str = "K"  # K | MN


@dataclass(frozen=True)
class SfRuntime(Fields):
    """``sf_tmem.*``: the ``sf.cpp`` build (``kind`` 0/1/2 = mxf8f6f4/mxf4/mxf4nvf4, ``cg``, tile ``n``) and whether
    SFB starts at the odd 64-column half."""

    item: str = "sf"
    kind: int = 0
    cg: int = 1
    n: int = 128
    odd: bool = False

    @property
    def defines(self) -> tuple[str, ...]:
        """The ``-D`` defines of the ``sf`` program this case reads."""
        return (f"KIND={self.kind}", f"CG={self.cg}", f"TILE_N={self.n}")


@dataclass(frozen=True)
class AccRuntime(Fields):
    """``acc.*``: the accumulator tile ``M`` x ``N`` of a ``cta_group::cg`` MMA."""

    item: str = "acc"
    M: int = 128
    N: int = 256
    cg: int = 1


@dataclass(frozen=True)
class Sm120Runtime(Fields):
    """``sm120.*``: one operand fragment (``op`` A / B / C / SF) of an sm_120 block-scaled ``mma.sync``."""

    item: str = "sm120"
    kind: str = "mxf8f6f4"
    scale_vec: str = "1X"
    stype: str = "ue8m0"
    op: str = "A"


CutlassRuntime = IdescRuntime | SmemRuntime | SfRuntime | AccRuntime | Sm120Runtime


# ------------------------------------------------------------------------------------------ CUTLASS examples
@dataclass(frozen=True)
class ExampleForm(Fields):
    """A shipped CUTLASS example run on the VM (``example`` names it in ``cutlass_examples.EXAMPLES``)."""

    peer: str = "cutlass-example"
    example: str = ""
    cutlass: str = "absent"  # the nvidia-cutlass version installed when the case was listed


@dataclass(frozen=True)
class ExampleRuntime(Fields):
    """The one problem (M, N, K) of a single-GEMM example."""

    m: int = 0
    n: int = 0
    k: int = 0


@dataclass(frozen=True)
class GroupedRuntime(Fields):
    """The problems of a grouped example, one ``MxNxK`` per group, comma-separated (the serialised form)."""

    problems: str = ""

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """``problems`` as one ``(m, n, k)`` per group."""
        return tuple(tuple(int(v) for v in p.split("x")) for p in self.problems.split(","))
