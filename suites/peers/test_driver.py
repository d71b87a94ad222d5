"""The peers driver on the contract's ground floor: a :class:`Driver` whose hooks are declared overrides, and cases
whose form and run-time fields are the typed records of the producer that made them (issue 25, item 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict

import pytest

from mmacts.core.driver import Driver, as_driver
from mmacts.core.fields import Fields
from suites.peers import driver as D
from suites.peers import fields as PF
from suites.peers import gluon_cases as GC
from suites.peers import triton_cases as TC

RECORDS: dict[str, tuple[type, tuple[type, ...]]] = {
    "triton": (PF.TritonForm, (dict,)),
    "gluon": (PF.GluonForm, (dict,)),
    "cutlass": (PF.CutlassForm, (PF.IdescRuntime, PF.SmemRuntime, PF.SfRuntime, PF.AccRuntime, PF.Sm120Runtime)),
    "cutlass-example": (PF.ExampleForm, (PF.ExampleRuntime, PF.GroupedRuntime)),
}
"""Per peer: its form record and the run-time records its cases may carry (Triton and Gluon have none: ``{}``)."""

ALL = D.DRIVER.cases("full")


def test_the_driver_derives_from_driver_and_declares_each_hook_it_writes() -> None:
    """Every public method is a declared override, and every override names a hook of :class:`Driver` (a
    misspelt hook would otherwise be a method nobody calls, and the base's default would run instead)."""
    assert isinstance(D.DRIVER, Driver) and as_driver(D.DRIVER) is D.DRIVER and D.DRIVER.judges_own_cases
    public = {n for n, v in vars(D.PeersDriver).items() if callable(v) and not n.startswith("_")}
    declared = {n for n, v in vars(D.PeersDriver).items() if getattr(v, "__override__", False)}
    assert public == declared
    assert all(callable(getattr(Driver, n, None)) for n in declared), declared - set(dir(Driver))
    assert {"cases", "module_ptx", "device_supported", "run_case"} <= declared


@pytest.mark.parametrize("peer", sorted(RECORDS))
def test_every_case_carries_its_producers_records(peer: str) -> None:
    cases = [c for c in ALL if c.form.peer == peer]
    if not cases and peer == "cutlass":
        pytest.skip("no CUTLASS comparison cases here (nvidia-cutlass or its build is absent)")
    assert cases, peer
    form, runtimes = RECORDS[peer]
    for c in cases:
        assert type(c.form) is form and isinstance(c.form, Fields), c.case_id
        assert isinstance(c.runtime, runtimes), (c.case_id, type(c.runtime))
        assert hash(c.form_key)  # frozen, hashable values: equal forms share one module


def test_a_kernel_configuration_is_its_form_without_the_peer() -> None:
    """The PTX disk cache is keyed by the configuration's fields (``cached_compile``): the form's ``peer`` is not
    one of them, so a typed form keeps every cached kernel's key."""
    for c, config_of in [(c, TC.config_of) for c in TC.triton_cases("full")] + [
            (c, GC.config_of) for c in GC.gluon_cases("full")]:
        cfg = config_of(c)
        assert type(cfg) in (PF.TritonConfig, PF.GluonConfig)
        assert asdict(cfg) == {k: v for k, v in c.form.items() if k != "peer"}
        assert cfg.case_id == c.case_id


def test_a_misspelt_field_is_refused_where_the_record_is_made() -> None:
    with pytest.raises(TypeError, match="SmemRuntime has no field swizle"):
        PF.SmemRuntime.of({"swizle": "64B"})
    assert PF.GroupedRuntime(problems="128x128x256,256x128x128").shapes == ((128, 128, 256), (256, 128, 128))
    assert PF.SfRuntime(kind=2, cg=2, n=192).defines == ("KIND=2", "CG=2", "TILE_N=192")


def test_a_triton_case_seed_is_the_same_in_every_process() -> None:
    """Python's ``hash()`` of a string is salted per process: a seed drawn from it gave each run (and each xdist
    worker) other data for the same case id."""
    code = ("from suites.peers.triton_cases import triton_cases as t;"
            "print(sorted((c.case_id, c.seed) for c in t('full'))[:5])")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(s)}).stdout for s in (1, 2)}
    assert len(runs) == 1
