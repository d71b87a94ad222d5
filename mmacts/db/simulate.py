"""A simulated fleet for the store's tests and its scale benchmark: nightly runs of one case list
on N GPUs of one host, with what a year brings (a driver upgrade that breaks cases and a later one
that fixes them, a ptxas upgrade that breaks others, flaky cases on one GPU, a weekly git sha).

Runs are (run.json dict, results DataFrame) pairs shaped like a real run directory's, so they go
through the same ``ingest.prepare`` + ``write_prepared`` as ``mmacts db ingest``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mmacts.core.records import COLUMNS
from mmacts.core.suites import load_driver, suite_names


@dataclass(frozen=True)
class Events:
    """What happens when, in days from the first night."""

    driver_break: int = 120      # driver 580 -> 590: the driver_broken cases fail on every GPU
    driver_fix: int = 250        # driver 590 -> 595: they pass again
    ptxas_break: int = 200       # ptxas 13.1.80 -> 13.5.37: the ptxas_broken cases fail from here on
    flaky_gpu: int = 3           # the flaky cases fail now and then on this GPU only
    flaky_p: float = 0.15


def driver_on(day: int, ev: Events) -> tuple[str, str]:
    if day < ev.driver_break:
        return "580.95.05", "13.0"
    if day < ev.driver_fix:
        return "590.44.01", "13.1"
    return "595.10.02", "13.2"


def ptxas_on(day: int, ev: Events) -> str:
    return "13.1.80" if day < ev.ptxas_break else "13.5.37"


def real_cases(level: str = "full") -> pd.DataFrame:
    """The suites' own cases at ``level`` (IDs, suites, spec rows): the benchmark's case list."""
    rows = []
    for s in suite_names():
        for c in load_driver(s).cases(level):
            if c.in_level(level):
                rows.append({"case_id": c.case_id, "suite": s, "spec_rows": " ".join(c.spec_rows)})
    return pd.DataFrame(rows)


def tiny_cases(n: int = 60) -> pd.DataFrame:
    """A small made-up case list over three suites and a few spec tables (tests)."""
    suites = ("mma_sync_blockscale", "tcgen05_blockscale", "probes")
    rows = []
    for i in range(n):
        s = suites[i % 3]
        refs = "" if s == "probes" else f"T{35 + i % 4}.{1 + i % 5} T54.{1 + i % 3}"
        rows.append({"case_id": f"{s}.case{i:03d}", "suite": s, "spec_rows": refs})
    return pd.DataFrame(rows)


def _pick(case_ids: pd.Series, salt: str, k: int, exclude: set[int] = frozenset()) -> np.ndarray:
    h = np.array([int(hashlib.sha1(f"{salt}{c}".encode()).hexdigest()[:8], 16) for c in case_ids])
    order = [i for i in np.argsort(h) if i not in exclude and not str(case_ids.iloc[i]).startswith("probes")]
    return np.array(sorted(order[:k]), dtype=int)


class Fleet:
    """``Fleet(cases, days, gpus).runs()`` yields (meta, results) per GPU per night, oldest first."""

    def __init__(self, cases: pd.DataFrame, days: int, gpus: int, host: str = "node01",
                 first_day: _dt.date = _dt.date(2026, 1, 1), events: Events | None = None, seed: int = 0,
                 gpu_name: str = "NVIDIA B200", n_driver_broken: int = 20, n_ptxas_broken: int = 10,
                 n_flaky: int = 15) -> None:
        self.cases, self.days, self.gpus, self.host = cases.reset_index(drop=True), days, gpus, host
        self.first_day, self.ev, self.gpu_name = first_day, events or Events(), gpu_name
        self.rng = np.random.default_rng(seed)
        ids = self.cases["case_id"]
        self.driver_broken = _pick(ids, "driver", n_driver_broken)
        self.ptxas_broken = _pick(ids, "ptxas", n_ptxas_broken, set(self.driver_broken))
        self.flaky = _pick(ids, "flaky", n_flaky, set(self.driver_broken) | set(self.ptxas_broken))
        n = len(self.cases)
        self.is_probe = self.cases["suite"].eq("probes").to_numpy()
        base = pd.DataFrame({c: pd.Series([None] * n, dtype=object) for c in COLUMNS})
        base["case_id"] = ids
        base["suite"] = self.cases["suite"]
        base["spec_rows"] = self.cases["spec_rows"]
        base["instruction"] = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"
        base["arch"], base["backend"], base["executor"] = "sm_100a", "cuda", "cuda"
        base["level"], base["expect"], base["compare_mode"] = "full", "accept", "exact"
        base["sass_opcodes"] = "UTCQMMA:1 UTCBAR:1"
        base["mismatches"] = 0
        base["max_abs_err"] = 0.0
        base["max_ulp_err"] = 0.0
        base["message"] = "exact by construction (reference.gemm)"
        base.loc[self.is_probe, "message"] = "probe: value recorded"
        self.base = base
        self.kernel_base = 20.0 + 30.0 * self.rng.random(n)

    def run_meta(self, day: int, gpu: int) -> dict:
        kd, api = driver_on(day, self.ev)
        start = _dt.datetime.combine(self.first_day + _dt.timedelta(days=day), _dt.time(2, 0, gpu))
        git = hashlib.sha1(f"week{day // 7}".encode()).hexdigest()
        return {"schema": "mmacts-run/1", "host": self.host, "platform": "Linux (simulated)", "python": "3.12",
                "gpu": {"usable": True, "reason": "", "name": self.gpu_name, "compute_capability": "sm_100",
                        "count": self.gpus, "driver": api, "kernel_driver": kd, "cuda_runtime": api},
                "toolchain": {"ptxas": ptxas_on(day, self.ev), "nvdisasm": ptxas_on(day, self.ev)},
                "packages": {}, "git_sha": git,
                "command": ["mmacts", "run", "--level", "full", "--backend", "cuda", "--gpu", str(gpu)],
                "options": {"suites": sorted(self.cases["suite"].unique()), "level": "full", "backend": "cuda",
                            "k": None, "n": None, "shard": None, "case_timeout": 300.0},
                "start": start.isoformat() + "+00:00",
                "end": (start + _dt.timedelta(minutes=40)).isoformat() + "+00:00", "complete": True,
                "scheduler": {"kind": "simulated", "batch": f"night-{day}"}}

    def results(self, day: int, gpu: int) -> pd.DataFrame:
        df = self.base.copy()
        n = len(df)
        status = np.where(self.is_probe, "observed", "pass").astype(object)
        if self.ev.driver_break <= day < self.ev.driver_fix:
            status[self.driver_broken] = "fail"
        if day >= self.ev.ptxas_break:
            status[self.ptxas_broken] = "fail"
        if gpu == self.ev.flaky_gpu:
            hit = self.flaky[self.rng.random(len(self.flaky)) < self.ev.flaky_p]
            status[hit] = "timeout"
        df["status"] = status
        bad = status != "pass"
        bad &= ~self.is_probe
        df.loc[bad, "mismatches"] = 64
        df.loc[bad, "message"] = "whole rows wrong: SFA layout (first mismatch at row 3)"
        df.loc[status == "timeout", "message"] = "the kernel's bounded wait expired"
        df["device"] = f"{self.gpu_name} #{gpu}"
        df["ptxas_version"] = ptxas_on(day, self.ev)
        df["kernel_us"] = self.kernel_base * (1.0 + 0.02 * self.rng.standard_normal(n)) * (
            1.08 if day >= self.ev.ptxas_break else 1.0)
        df["compile_s"] = 0.02
        df["run_s"] = df["kernel_us"] * 1e-6 + 0.001
        answers = np.where(self.rng.random(n) < 0.999, "quadrant 0", "quadrant 2")
        df.loc[self.is_probe, "observation"] = [json.dumps({"answer": a}) for a in answers[self.is_probe]]
        return df

    def runs(self) -> Iterator[tuple[dict, pd.DataFrame]]:
        for day in range(self.days):
            for gpu in range(self.gpus):
                yield self.run_meta(day, gpu), self.results(day, gpu)
