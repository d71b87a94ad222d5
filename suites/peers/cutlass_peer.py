"""CUTLASS as a peer: what CUTLASS's SM100/SM120 block-scaled code computes on the host, compared value by value
with what the PTX VM's operand decoders (``mmacts.ptxvm.tcgen05`` / ``warpmma``) read and with the host encoders
(``reference.tcgen05`` / ``reference.mma_sync``).

Small host-only C++ programs (``suites/peers/cutlass/*.cpp``) include CuTe/CUTLASS headers from the
``nvidia-cutlass`` wheel (and CCCL from ``nvidia-cuda-cccl``), are compiled by the ``nvidia-cuda-nvcc`` wheel's
nvcc with the system g++ as host compiler (``-x c++``: no device code), and print one JSON object per
configuration. Builds and outputs are cached under ``.mmacts-cache/peers/`` keyed by the CUTLASS version and a
hash of the sources, defines and flags.

Items (case id prefix ``peers.cutlass.``):

* ``idesc.*``   -- ``MMA_Traits<SM100_MMA_MXF*>::idesc_`` + ``make_runtime_instr_desc_block_scaled`` (SF IDs from
  bits 30-31 of the SF TMEM addresses) vs the VM's ``decode_idesc`` and ``reference.tcgen05.idesc``.
* ``smem.*``    -- ``UMMA::Layout_{K,MN}_*_Atom`` tiled as the collective does, ``make_fragment_B`` descriptors
  per MMA k-block and CuTe's swizzled (n, k) -> byte address, vs the VM's ``walk`` through each descriptor
  (and ``reference.tcgen05.smem_image.walk_addresses``).
* ``sf_tmem.*`` -- the collective's SF smem layouts, ``tcgen05.cp`` (UTCCP 4x32dp128bit) copies and per-k-block SF
  addresses / run-time idesc, executed end to end on the VM (``execute_cp`` then the MMA's SF read): every
  (m, n, j) must see the SF CUTLASS put there. Plus CUTLASS's TMEM SF cells vs ``reference.tcgen05.tmem_image``.
* ``acc.*``     -- ``tmem_frg`` accumulator placement vs the VM's ``d_cells`` and ``reference`` ``d_lane_col``.
* ``sm120.*``   -- ``MMA_Traits<SM120::BLOCKSCALED::*>`` A/B/C/SFA/SFB layouts vs ``warpmma.mma_sync`` and
  ``reference.mma_sync``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import numpy as np

from mmacts.cases.model import Case, level_rank
from mmacts.ptxvm.tcgen05 import cp as vm_cp
from mmacts.ptxvm.tcgen05 import decode as vm_decode
from mmacts.ptxvm.tcgen05 import mma as vm_mma
from mmacts.ptxvm.tcgen05 import smem_operand as vm_smem
from mmacts.ptxvm.warpmma import mma_sync as vm_sync
from reference.mma_sync import fragments as ref_fr
from reference.mma_sync import scales as ref_sc
from reference.tcgen05 import idesc as ref_idesc
from reference.tcgen05 import smem_desc as ref_sd
from reference.tcgen05 import smem_image as ref_si
from reference.tcgen05 import tmem_image as ref_ti
from reference.tcgen05 import tmem_image as ref_tm
from suites.peers.fields import (
    AccRuntime,
    CutlassForm,
    CutlassRuntime,
    IdescRuntime,
    SfRuntime,
    Sm120Runtime,
    SmemRuntime,
)

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(__file__).resolve().parent / "cutlass"
SUITE = "peers"
FLAGS = ("-x", "c++", "-std=c++17", "-O0", "-ccbin", "g++")


# ------------------------------------------------------------------------------------------------ toolchain
class Unavailable(RuntimeError):
    """The CUTLASS headers, nvcc or g++ are missing, or a program does not build."""


def cutlass_version() -> str | None:
    try:
        return importlib.metadata.version("nvidia-cutlass")
    except importlib.metadata.PackageNotFoundError:
        return None


@cache
def toolchain() -> dict[str, str]:
    """Paths of nvcc, g++, the CUTLASS include dir and the CCCL include dir; raises ``Unavailable``."""
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    cands = [Path(p) for p in sys.path if p.endswith("site-packages")] + [site]
    out: dict[str, str] = {}
    for sp in cands:
        if "cutlass" not in out and (sp / "cutlass_library/source/include/cute/tensor.hpp").exists():
            out["cutlass"] = str(sp / "cutlass_library/source/include")
        for cu in sorted(sp.glob("nvidia/cu*")):
            if "nvcc" not in out and (cu / "bin/nvcc").exists():
                out["nvcc"] = str(cu / "bin/nvcc")
            if "cccl" not in out and (cu / "include/cccl/cuda/std/utility").exists():
                out["cccl"] = str(cu / "include/cccl")
    gxx = shutil.which("g++")
    if gxx:
        out["gxx"] = gxx
    missing = [k for k in ("cutlass", "nvcc", "cccl", "gxx") if k not in out]
    if missing:
        what = {
            "cutlass": "nvidia-cutlass (include/cute)",
            "nvcc": "nvidia-cuda-nvcc",
            "cccl": "nvidia-cuda-cccl",
            "gxx": "g++",
        }
        raise Unavailable("CUTLASS peer needs " + ", ".join(what[m] for m in missing) + " (pip install '.[peers]')")
    return out


def _cache_root() -> Path:
    return Path(os.environ.get("MMACTS_CACHE_DIR", ROOT / ".mmacts-cache")) / "peers"


def _key(program: str, defines: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    h.update(f"cutlass={cutlass_version()}|flags={FLAGS}|defines={defines}".encode())
    for f in sorted([SRC / "common.hpp", SRC / f"{program}.cpp"]):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def build_and_run(program: str, defines: tuple[str, ...] = ()) -> list[dict]:
    """Build (cached) ``cutlass/<program>.cpp`` with ``-D`` ``defines``, run it (output cached), parse JSON lines."""
    tc = toolchain()
    d = (
        _cache_root() / f"cutlass-{cutlass_version()}" / f"{program}-{'-'.join(defines) or 'default'}-"
        f"{_key(program, defines)}"
    )
    out = d / "out.jsonl"
    if not out.exists():
        d.mkdir(parents=True, exist_ok=True)
        exe = d / program
        cmd = [
            tc["nvcc"],
            *FLAGS,
            "-ccbin",
            tc["gxx"],
            f"-I{tc['cutlass']}",
            f"-I{tc['cccl']}",
            f"-I{SRC}",
            *(f"-D{x}" for x in defines),
            str(SRC / f"{program}.cpp"),
            "-o",
            str(exe),
        ]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if r.returncode:
            err = "\n".join(ln for ln in (r.stderr + r.stdout).splitlines() if "error" in ln)[:2000]
            raise Unavailable(f"building {program} {defines} failed: {err or r.stderr[-2000:]}")
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
        if r.returncode:
            raise Unavailable(f"running {program} {defines} failed (rc {r.returncode}): {r.stderr[-500:]}")
        tmp = out.with_suffix(".tmp")
        tmp.write_text(r.stdout)
        tmp.replace(out)
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


@cache
def records(program: str, defines: tuple[str, ...] = ()) -> tuple[dict, ...]:
    return tuple(build_and_run(program, defines))


def prebuild(jobs: list[tuple[str, tuple[str, ...]]]) -> None:
    """Build several programs in parallel (2 workers: the CI machines have 2 cores)."""
    todo = sorted(set(jobs))
    with ThreadPoolExecutor(max_workers=2) as ex:
        list(ex.map(lambda j: records(*j), todo))


# ------------------------------------------------------------------------------------------------ cases
SF_CONFIGS = [(kind, cg, n) for kind in (0, 1, 2) for cg in (1, 2) for n in (64, 128, 192, 256)]
KIND_NAMES = {0: "mxf8f6f4", 1: "mxf4", 2: "mxf4nvf4"}
CUTLASS_SCALE_VEC = {"mxf8f6f4": "1X", "mxf4": "2X", "mxf4nvf4": "4X"}
"""The one scale vector CUTLASS's SM100 block-scaled MMA uses per kind (a peer fact: its SF IDs are byte offsets
of that vector)."""
VALID_SF_IDS = {kind: ref_ti.VALID_SF_IDS[vec] for kind, vec in CUTLASS_SCALE_VEC.items()}
"""The SF IDs Table 54 allows for it (the oracle's table, not a third copy)."""


def _idesc_id(r: dict) -> str:
    neg = {(0, 0): "", (1, 0): ".negA", (0, 1): ".negB", (1, 1): ".negAB"}[(r["negate_a"], r["negate_b"])]
    return (
        f"peers.cutlass.idesc.{r['kind']}.{r['atype']}x{r['btype']}.{r['stype']}.M{r['M']}N{r['N']}."
        f"{r['a_major']}-{r['b_major']}{neg}" + (".cg2" if r["cta_group"] == 2 and r["M"] == 128 else "")
    )


def _idesc_level(r: dict) -> str:
    smoke = {
        ("mxf8f6f4", "e4m3", "e2m1", 128, 256, "K", "K", 0, 0),
        ("mxf4nvf4", "e2m1", "e2m1", 128, 128, "K", "K", 0, 0),
    }
    key = (r["kind"], r["atype"], r["btype"], r["M"], r["N"], r["a_major"], r["b_major"], r["negate_a"], r["negate_b"])
    if key in smoke:
        return "smoke"
    if r["kind"] == "mxf8f6f4" and r["N"] == 256 and r["M"] == 128:
        return "standard"  # every type pair and major-ness
    if r["negate_a"] or r["negate_b"] or r["N"] in (8, 64, 128, 192, 256):
        return "standard"
    return "full"


def _case(case_id: str, level: str, instruction: str, arch: str, rows: tuple[str, ...],
          runtime: CutlassRuntime) -> Case:
    return Case(
        case_id=case_id,
        suite=SUITE,
        instruction=instruction,
        arch=arch,
        spec_rows=rows,
        level=level,
        form=CutlassForm(cutlass=cutlass_version() or "absent"),
        runtime=runtime,
        recipe="peer",
    )


def cutlass_cases(level: str) -> list[Case]:
    """The CUTLASS comparison cases of ``level`` (smoke / standard / full). Building happens in ``run``."""
    lv = level_rank(level)
    out: list[Case] = []
    seen: set[str] = set()

    def add(c: Case) -> None:
        if level_rank(c.level) <= lv and c.case_id not in seen:
            seen.add(c.case_id)
            out.append(c)

    if cutlass_version() is None:
        return out
    # idesc: the configurations idesc.cpp enumerates are known statically; read them once built (cheap, 4 s)
    try:
        recs = [r for r in records("idesc") if r["sfa_id"] == 0 and r["sfb_id"] == 0]
    except Unavailable:
        recs = []
    for r in recs:
        cid = _idesc_id(r)
        add(
            _case(
                cid,
                _idesc_level(r),
                f"tcgen05.mma.cta_group::{r['cta_group']}.kind::{r['kind']}.block_scale",
                "sm_100a",
                ("S9.7.16.4",),
                IdescRuntime(id=cid),
            )
        )
    smem_levels = {("b8", "128B", "K"): "smoke", ("b8", "128B_base32B", "MN"): "smoke"}
    for elem in ("b8", "b16", "fp4x2", "p4", "p6"):
        for major in ("K", "MN"):
            for sw in ("none", "32B", "64B", "128B", "128B_base32B"):
                if (major == "K" and sw == "128B_base32B") or (elem == "fp4x2" and major == "MN"):
                    continue
                cid = f"peers.cutlass.smem.{_SW_ID[sw]}.{elem}.{major}"
                add(
                    _case(
                        cid,
                        smem_levels.get((elem, sw, major), "standard"),
                        "tcgen05.mma (smem descriptor)",
                        "sm_100a",
                        ("S9.7.16.3",),
                        SmemRuntime(elem=elem, swizzle=sw, major=major),
                    )
                )
    for kind, cg, n in SF_CONFIGS:
        lvl = "smoke" if (kind, cg, n) == (0, 1, 128) else ("standard" if n in (128, 192) or kind == 2 else "full")
        for odd in (False, True) if n in (64, 192) else (False,):
            cid = f"peers.cutlass.sf_tmem.{KIND_NAMES[kind]}.cg{cg}.N{n}" + (".odd" if odd else "")
            add(
                _case(
                    cid,
                    lvl,
                    f"tcgen05.cp.cta_group::{cg}.32x128b.warpx4 + tcgen05.mma.kind::{KIND_NAMES[kind]}",
                    "sm_100a",
                    ("S9.7.16.9", "S9.7.16.10.7"),
                    SfRuntime(kind=kind, cg=cg, n=n, odd=odd),
                )
            )
    for _atom, m, n, cg in _ACC_CONFIGS:
        lvl = "smoke" if (m, n, cg) == (128, 256, 2) else "standard"
        cid = f"peers.cutlass.acc.cg{cg}.M{m}N{n}"
        add(
            _case(
                cid,
                lvl,
                f"tcgen05.mma.cta_group::{cg} (accumulator)",
                "sm_100a",
                ("S9.7.16.10.5",),
                AccRuntime(M=m, N=n, cg=cg),
            )
        )
    for kind, sv, st in (
        ("mxf8f6f4", "1X", "ue8m0"),
        ("mxf4nvf4", "2X", "ue8m0"),
        ("mxf4nvf4", "4X", "ue8m0"),
        ("mxf4nvf4", "4X", "ue4m3"),
    ):
        short = {"mxf8f6f4": "mxf8f6f4", "mxf4nvf4": "mxf4"}[kind]
        for op in ("A", "B", "C", "SF"):
            cid = f"peers.cutlass.sm120.frag.{op}.{short}.{sv}.{st}"
            lvl = "smoke" if (op, short, sv) == ("A", "mxf4", "4X") and st == "ue8m0" else "standard"
            add(
                _case(
                    cid,
                    lvl,
                    f"mma.sync.aligned.kind::{kind}.block_scale.scale_vec::{sv}",
                    "sm_120a",
                    ("S9.7.14.3",),
                    Sm120Runtime(kind=kind, scale_vec=sv, stype=st, op=op),
                )
            )
    return out


_SW_ID = {"none": "INTER", "32B": "SW32", "64B": "SW64", "128B": "SW128", "128B_base32B": "SW128_32B"}
_ACC_CONFIGS = (
    [("SM100_MMA_MXF8F6F4_SS", 128, n, 1) for n in (8, 16, 24, 64, 120, 128, 192, 256)]
    + [("SM100_MMA_MXF8F6F4_2x1SM_SS", 256, n, 2) for n in (16, 64, 128, 192, 256)]
    + [("SM100_MMA_MXF4_2x1SM_SS", 128, n, 2) for n in (16, 64, 128, 256)]
)


def programs_for(cases: list[Case]) -> list[tuple[str, tuple[str, ...]]]:
    jobs = []
    for c in cases:
        it = c.runtime.item
        if it == "sf":
            jobs.append(("sf", c.runtime.defines))
        else:
            jobs.append(({"idesc": "idesc", "smem": "smem", "acc": "acc", "sm120": "sm120"}[it], ()))
    return jobs


# ------------------------------------------------------------------------------------------------ run
def run_cutlass_case(case: Case) -> tuple[str, str]:
    """``(status, message)``: ``pass`` (CUTLASS, the VM and the host encoders agree), ``fail`` (the message names
    the field and both values) or ``observed`` (CUTLASS does not exercise that point). Raises ``Unavailable`` when
    the programs cannot be built."""
    rt = case.runtime
    fn = {"idesc": _run_idesc, "smem": _run_smem, "sf": _run_sf, "acc": _run_acc, "sm120": _run_sm120}[rt.item]
    fails = fn(rt)
    if isinstance(fails, tuple):
        return fails
    if fails:
        return "fail", "; ".join(fails[:6]) + (f"; ... ({len(fails)} disagreements)" if len(fails) > 6 else "")
    return "pass", f"CUTLASS {cutlass_version()} agrees with the VM decoders and the host encoders"


# -- idesc
def _run_idesc(rt: IdescRuntime) -> list[str]:
    fails: list[str] = []
    recs = [r for r in records("idesc") if _idesc_id(r) == rt.id]
    if not recs:
        return ["configuration missing from CUTLASS's output"]
    for r in recs:
        kind = r["kind"]
        if r["sfa_id"] not in VALID_SF_IDS[kind] or r["sfb_id"] not in VALID_SF_IDS[kind]:
            continue  # CUTLASS only makes SF IDs that are byte offsets of its scale_vec (1X: 0-3, 2X: 0/2, 4X: 0)
        w = int(r["word"])
        want = {
            "m": r["M"],
            "n": r["N"],
            "transpose_a": int(r["a_major"] == "MN"),
            "transpose_b": int(r["b_major"] == "MN"),
            "negate_a": r["negate_a"],
            "negate_b": r["negate_b"],
            "sfa_id": r["sfa_id"],
            "sfb_id": r["sfb_id"],
            "sparse": 0,
            "k96": 0,
            "atype_name": r["atype"],
            "btype_name": r["btype"],
            "scale_type_name": r["stype"],
        }
        tag = f"sf_ids {r['sfa_id']}/{r['sfb_id']} word {w:#010x}"
        try:
            got = vm_decode.decode_idesc(kind, w)
        except ValueError as e:
            fails.append(f"VM decode_idesc rejects CUTLASS's word ({tag}): {e}")
            continue
        for k, v in want.items():
            if got.get(k) != v:
                fails.append(f"{k}: CUTLASS builds {v}, the VM reads {got.get(k)} ({tag})")
        try:
            ref = ref_idesc.decode_idesc(kind, w, strict=True)
        except ValueError as e:
            fails.append(f"reference.tcgen05.idesc rejects CUTLASS's word ({tag}): {e}")
            continue
        for k in ("m", "n", "transpose_a", "transpose_b", "negate_a", "negate_b", "sfa_id", "sfb_id", "sparse"):
            if ref.get(k) != want[k]:
                fails.append(
                    f"host encoder {k}: CUTLASS builds {want[k]}, reference.tcgen05.idesc reads {ref.get(k)} ({tag})"
                )
        for k in ("atype", "btype", "scale_type"):
            if ref.get(k) != got.get(k):
                fails.append(f"host encoder {k}: VM code {got.get(k)}, reference code {ref.get(k)} ({tag})")
    return fails


# -- smem
def _run_smem(rt: SmemRuntime) -> list[str] | tuple[str, str]:
    elem, sw, major = rt.elem, rt.swizzle, rt.major
    src = "b8" if elem in ("p4", "p6") else elem
    rec = next((r for r in records("smem") if r["elem"] == src and r["swizzle"] == sw and r["major"] == major), None)
    if rec is None:
        return "observed", f"CUTLASS builds no {elem} {major}-major {sw} operand layout"
    n, k, mk, base, bits = rec["N"], rec["K"], rec["mma_k"], rec["base"], rec["bits"]
    off = np.asarray(rec["offset"], dtype=np.int64).reshape(k, n)  # [k, n]
    fails: list[str] = []
    for kb, word in enumerate(rec["desc"]):
        word = int(word)
        d = vm_decode.decode_smem_desc(word)
        ks = slice(kb * mk, (kb + 1) * mk)
        cute = off[ks, :]  # (mk, n): byte offsets (fp4: 2 * byte + nibble)
        contig = mk if major == "K" else n
        rows = n if major == "K" else mk
        row_bytes = contig * bits // 8
        vm = vm_smem.walk(d, rows, row_bytes, major).astype(np.int64) - base
        rd = ref_sd.decode_smem_desc(word)
        ref = np.asarray(ref_si.walk_addresses(rd, rows, row_bytes, major), dtype=np.int64) - base
        for name, got in (("VM walk", vm), ("reference walk_addresses", ref)):
            if bits == 4:  # element (n, k) at byte k // 2, nibble k % 2
                kk = np.arange(mk)
                mine = 2 * got[:, kk // 2] + kk % 2  # (n, mk)
                mine = mine.T
            elif major == "K":
                mine = got[:, 0 :: bits // 8].T if bits > 8 else got.T  # (mk, n)
            else:
                mine = got[:, 0 :: bits // 8] if bits > 8 else got  # (mk, n)
            bad = np.argwhere(mine != cute)
            if bad.size:
                kl, nn = bad[0]
                fails.append(
                    f"k-block {kb} desc {word:#018x} ({d['swizzle']}, LBO {d['lbo']}, SBO {d['sbo']}): element "
                    f"(n={nn}, k={kb * mk + kl}) at CuTe offset {int(cute[kl, nn])}, {name} "
                    f"{int(mine[kl, nn])} ({len(bad)} of {mine.size} differ)"
                )
    return fails


# -- scale factors end to end
def _run_sf(rt: SfRuntime) -> list[str]:
    recs = records("sf", rt.defines)
    sf = next(r for r in recs if r["item"] == "sf")
    cps = {r["which"]: r for r in recs if r["item"] == "utccp"}
    base = next(r for r in recs if r["item"] == "sf_base")
    kind, cg, m, n = sf["kind"], sf["cta_group"], sf["M"], sf["N"]
    f_cnt, nsf, xa, xb = sf["k_tile"] // sf["vs"], sf["nsf"], sf["xa"], sf["xb"]
    stype = "ue4m3" if kind == "mxf4nvf4" else "ue8m0"
    rng = np.random.default_rng(1234 + 7 * n + cg)
    hi = 0x7E if stype == "ue4m3" else 0xFE
    sfa = rng.integers(1, hi + 1, size=(cg, xa, f_cnt), dtype=np.uint8)
    sfb = rng.integers(1, hi + 1, size=(xb, f_cnt), dtype=np.uint8)
    sa_off = np.asarray(sf["smem_sfa"]).reshape(xa, f_cnt)
    sb_off = np.asarray(sf["smem_sfb"]).reshape(xb, f_cnt)
    smems = []
    for v in range(cg):
        s = np.zeros(0x20000, dtype=np.uint8)
        s[base["sfa_smem"] + sa_off] = sfa[v]
        s[base["sfb_smem"] + sb_off] = sfb
        smems.append(s)
    tmems = [np.full((128, 512), 0xFFFFFFFF, dtype=np.uint32) for _ in range(cg)]
    fails: list[str] = []
    for which in ("A", "B"):
        for desc, taddr in zip(cps[which]["desc"], cps[which]["taddr"], strict=True):
            vm_cp.execute_cp(tmems, smems, int(taddr), int(desc), shape="32x128b", multicast="warpx4")
    layout = vm_mma.layout_of(m, cg, False)
    cta, lane, _ = vm_mma.d_cells(layout, m, n)
    shift = 64 if rt.odd else 0
    b_addr = sf["sfb_addr_odd"] if rt.odd else sf["sfb_addr"]
    idescs = sf["idesc_odd"] if rt.odd else sf["idesc"]
    rows_cta = m // cg
    for kb, (a_addr, bb, word) in enumerate(zip(sf["sfa_addr"], b_addr, idescs, strict=True)):
        fdec = vm_decode.decode_idesc(kind, int(word))
        fp = vm_mma.MmaFootprint([], [np.zeros((128, 512), bool)] * cg, [np.zeros((128, 512), bool)] * cg)
        sa, sb = vm_mma._read_scales(tmems, fdec, int(a_addr), int(bb), stype, nsf, layout, m, n, cta, lane, fp)
        for j in range(nsf):
            f = kb * nsf + j
            mm = np.arange(m)
            want_a = vm_mma.values(stype, sfa[mm // rows_cta, mm % rows_cta, f])[:, None]
            want_b = vm_mma.values(stype, sfb[np.arange(n) + shift, f])[None, :]
            for name, got, want in (("SFA", sa[j], want_a), ("SFB", sb[j], want_b)):
                want = np.broadcast_to(want, got.shape)
                bad = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want))))
                if bad.size:
                    r0, c0 = bad[0]
                    sf_addr = int(a_addr if name == "SFA" else bb)
                    fails.append(
                        f"{name} k-block {kb} sf {j} (idesc {int(word):#010x}, addr {sf_addr:#010x}): "
                        f"D({r0},{c0}) VM reads {got[r0, c0]}, CUTLASS placed {want[r0, c0]} "
                        f"({len(bad)} of {got.size} cells differ)"
                    )
    # CUTLASS's TMEM SF cells (every replica) vs the host encoder's sf_cell (datapath 4x1)
    if layout in ("D", "A"):
        for which, x_n, reps, cells in (("A", xa, sf["ra"], sf["tmem_sfa"]), ("B", xb, sf["rb"], sf["tmem_sfb"])):
            addr = np.asarray(cells, dtype=np.int64).reshape(x_n, f_cnt, reps)
            if which == "B":  # CUTLASS stages SFB for N rounded up to 128; compare the N columns the MMA uses
                x_n = n
                addr = addr[:n]
            col0 = int(sf["sfa_addr"][0] if which == "A" else sf["sfb_addr"][0]) & 0xFFFF
            lanes_c = (addr >> 16) & 0x3FFF
            cols_c = (addr & 0xFFFF) - col0
            byte_c = (addr >> 30) & 3
            x = np.arange(x_n)[:, None]
            g = np.arange(f_cnt)[None, :]
            try:
                rl, rc, rb = ref_tm.sf_cell(which, x, g, datapath="4x1", n=n if which == "B" else None)
            except Exception as e:  # noqa: BLE001 -- report the encoder's refusal as a finding
                fails.append(f"reference sf_cell({which}) refuses CUTLASS's configuration: {e}")
                continue
            rl = np.asarray(rl)
            if rl.ndim == 2:
                rl = rl[..., None] + 32 * np.arange(4)
            rc = np.broadcast_to(np.asarray(rc), (x_n, f_cnt))
            rb = np.broadcast_to(np.asarray(rb), (x_n, f_cnt))
            if not np.array_equal(np.sort(lanes_c, axis=-1), np.sort(np.broadcast_to(rl, lanes_c.shape), axis=-1)):
                i = np.argwhere(np.sort(lanes_c, axis=-1) != np.sort(np.broadcast_to(rl, lanes_c.shape), axis=-1))[0]
                fails.append(
                    f"host encoder SF{which} lanes of (x={i[0]}, f={i[1]}): CUTLASS {sorted(lanes_c[i[0], i[1]])}, "
                    f"reference {sorted(np.broadcast_to(rl, lanes_c.shape)[i[0], i[1]])}"
                )
            for nm, c, r in (("column", cols_c[..., 0], rc), ("byte", byte_c[..., 0], rb)):
                bad = np.argwhere(c != r)
                if bad.size:
                    i = bad[0]
                    fails.append(
                        f"host encoder SF{which} {nm} of (x={i[0]}, f={i[1]}): CUTLASS {int(c[i[0], i[1]])}, "
                        f"reference sf_cell {int(r[i[0], i[1]])}"
                    )
    return fails


# -- accumulator
def _run_acc(rt: AccRuntime) -> list[str] | tuple[str, str]:
    rec = next((r for r in records("acc") if r["M"] == rt.M and r["N"] == rt.N and r["cta_group"] == rt.cg), None)
    if rec is None:
        return "observed", "CUTLASS has no block-scaled atom for this shape"
    m, n, cg = rt.M, rt.N, rt.cg
    c_cta = np.asarray(rec["cta"]).reshape(m, n)
    c_lane = np.asarray(rec["lane"]).reshape(m, n)
    c_col = np.asarray(rec["col"]).reshape(m, n)
    layout = vm_mma.layout_of(m, cg, False)
    fails = []
    for name, (cta, lane, col) in (
        ("VM d_cells", vm_mma.d_cells(layout, m, n)),
        ("reference d_lane_col", ref_tm.d_lane_col(layout, n)),
    ):
        for fld, a, b in (("cta", c_cta, cta), ("lane", c_lane, lane), ("column", c_col, col)):
            bad = np.argwhere(np.asarray(b) != a)
            if bad.size:
                i, j = bad[0]
                fails.append(
                    f"Layout {layout} D({i},{j}) {fld}: CUTLASS {int(a[i, j])}, {name} {int(np.asarray(b)[i, j])} "
                    f"({len(bad)} cells)"
                )
    return fails


# -- sm_120 fragments
def _run_sm120(rt: Sm120Runtime) -> list[str]:
    rec = next(
        r
        for r in records("sm120")
        if r["kind"] == rt.kind and r["scale_vec"] == rt.scale_vec and r["stype"] == rt.stype
    )
    k, vs, op = rec["K"], rec["vs"], rt.op
    per = 4 if k == 32 else 8
    bits = 32 // per
    fails: list[str] = []
    if op in ("A", "B", "C"):
        vals = {"A": rec["a_vals"], "B": rec["b_vals"], "C": rec["c_vals"]}[op]
        idx = np.asarray(rec[op]).reshape(32, vals)
        t = np.broadcast_to(np.arange(32)[:, None], idx.shape)
        v = np.broadcast_to(np.arange(vals)[None, :], idx.shape)
        if op == "A":
            r_, c_ = idx % 16, idx // 16
            w = vm_sync._a_where(k)
            ref = ref_fr.a_layout(k)
        elif op == "B":
            c_, r_ = idx % 8, idx // 8  # B is (K, N) in the VM: [k, n]
            w = vm_sync._b_where(k)
            ref = ref_fr.b_layout(k)
        else:
            r_, c_ = idx % 16, idx // 16
            w = vm_sync._cd_where(False)
            ref = ref_fr.cd_layout()
        reg = v // per if op != "C" else v
        shift = (v % per) * bits if op != "C" else np.zeros_like(v)
        for fld, mine, theirs in (
            ("lane", w.lane[r_, c_], t),
            ("register", w.reg[r_, c_], reg),
            ("bit", w.shift[r_, c_], shift),
        ):
            bad = np.argwhere(mine != theirs)
            if bad.size:
                tt, vv = bad[0]
                fails.append(
                    f"{op} element ({r_[tt, vv]},{c_[tt, vv]}) {fld}: CUTLASS {int(theirs[tt, vv])}, VM "
                    f"{int(mine[tt, vv])} ({len(bad)} differ)"
                )
        # host encoder: Layout.rows/cols [32, nregs, slots]
        rr, cc = np.asarray(ref.rows), np.asarray(ref.cols)
        slots = rr.shape[2]
        if op == "B":
            want_r, want_c = r_, c_  # reference B rows = k, cols = n
        else:
            want_r, want_c = r_, c_
        got_r = rr[t, reg, (v % slots) if op != "C" else 0]
        got_c = cc[t, reg, (v % slots) if op != "C" else 0]
        if not (np.array_equal(got_r, want_r) and np.array_equal(got_c, want_c)):
            bad = np.argwhere((got_r != want_r) | (got_c != want_c))[0]
            fails.append(
                f"host encoder {op} lane {bad[0]} value {bad[1]}: CUTLASS ({want_r[tuple(bad)]},{want_c[tuple(bad)]}), "
                f"reference.mma_sync.fragments ({got_r[tuple(bad)]},{got_c[tuple(bad)]})"
            )
        return fails
    # scale factors: CUTLASS SFALayout/SFBLayout (T32, V=K) -> m + 16k / n + 8k; thread-id 0, byte-id 0 (CUTLASS)
    nsf = k // vs
    for which, mod, lane_vm, lane_ref in (
        ("SFA", 16, lambda x: 4 * (x % 8) + x // 8, lambda x: ref_sc.sfa_lane(x, 0)),
        ("SFB", 8, lambda x: 4 * x, lambda x: ref_sc.sfb_lane(x, 0)),
    ):
        idx = np.asarray(rec[which]).reshape(32, -1)
        holders: dict[tuple[int, int], set[int]] = {}
        for t in range(32):
            for val in idx[t]:
                x, kk = int(val) % mod, int(val) // mod
                holders.setdefault((x, kk // vs), set()).add(t)
        for x in range(mod):
            for j in range(nsf):
                hs = holders.get((x, j), set())
                for name, lane in (("VM", int(lane_vm(x))), ("reference", int(np.asarray(lane_ref(x))))):
                    if lane not in hs:
                        fails.append(
                            f"{which} {'row' if which == 'SFA' else 'column'} {x} sf {j}: {name} reads lane {lane} "
                            f"(thread-id 0), CUTLASS's {which}Layout puts it in lanes {sorted(hs)}"
                        )
        # every K inside one VS block must be held by the same lanes (one SF per block: byte j = k // VS)
        for x in range(mod):
            sets = [frozenset(t for t in range(32) if any(int(v) == x + mod * kk for v in idx[t])) for kk in range(k)]
            for j in range(nsf):
                if len(set(sets[j * vs : (j + 1) * vs])) != 1:
                    fails.append(f"{which} {x}: lanes differ inside scale block {j} (VS {vs})")
    return fails
