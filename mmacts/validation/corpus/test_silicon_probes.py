"""The Hopper probes on the VM give the bits an H100 gave (issue 12): every probe case of the sm_90 paths
(mma.sync e4m3 and wgmma e4m3, 813 purpose-built inner products with specials, subnormals, signed zeros,
alignment and rounding edges) recorded by `validation/h100-blackwell-suites-on-hopper` (cuda backend) is
run on the PTX VM through the same driver code; the measured bit patterns in its observation must be
identical, vector by vector (NaNs are recorded as 0x7FC00000 on both sides by ``probes.recover.to_bits``);
the two ``recover`` cases (which record the fitted features, not bits) must recover the same answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[3] / "validation" / "h100-blackwell-suites-on-hopper" / "results.jsonl"


def _silicon() -> dict[str, dict]:
    out = {}
    for line in RUN.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["suite"] == "probes" and r["backend"] == "cuda" and r["status"] == "observed" and r.get("observation"):
            out[r["case_id"]] = json.loads(r["observation"])
    return out


SILICON = _silicon()


def test_the_record_holds_both_hopper_paths() -> None:
    paths = {cid.rsplit(".", 1)[-1] for cid in SILICON}
    assert len(SILICON) == 28 and {"sm_90a"} == paths
    assert any(".wgmma." in c for c in SILICON) and any(".mma_sync." in c for c in SILICON)


@pytest.mark.parametrize("case_id", sorted(SILICON))
def test_probe_on_vm_matches_h100_bits(case_id: str) -> None:
    from mmacts.backends.execute import Executor
    from suites.probes.driver import DRIVER

    case = next(c for c in DRIVER.cases("full") if c.case_id == case_id)
    rec = Executor("model").execute(DRIVER, case)
    assert rec["executor"] == "ptxvm", rec["message"]
    obs = json.loads(rec["observation"])
    if "measured_bits" not in SILICON[case_id]:
        assert obs["answer"] == SILICON[case_id]["answer"]
        return
    vm, hw = obs["measured_bits"], SILICON[case_id]["measured_bits"]
    assert len(vm) == len(hw)
    diff = [(i, v, h) for i, (v, h) in enumerate(zip(vm, hw, strict=True)) if v != h]
    assert not diff, f"{len(diff)} of {len(hw)} vectors differ from the H100, first (index, VM, H100): {diff[0]}"
