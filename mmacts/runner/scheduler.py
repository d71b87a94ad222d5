"""``mmacts run --shard auto``: which shard this task is, from the scheduler's environment.

- explicit: ``MMACTS_SHARD_INDEX`` (0-based) and ``MMACTS_SHARD_COUNT``;
- Slurm job arrays: ``SLURM_ARRAY_TASK_ID`` with ``SLURM_ARRAY_TASK_COUNT`` (or ``_MIN``/``_MAX``;
  ``--array=1-8`` and ``--array=0-7`` both give shards 0..7; ``_STEP`` is honoured); the batch is
  ``SLURM_ARRAY_JOB_ID``;
- Kubernetes indexed Jobs: ``JOB_COMPLETION_INDEX`` (set by the Job controller) with the number of
  completions in ``MMACTS_SHARD_COUNT`` (the manifest passes ``spec.completions``; Kubernetes does
  not tell a pod); the batch is ``MMACTS_BATCH`` (the manifest passes the job name).

Shards of one batch that ingest into one store (``--db``) are what ``mmacts report merge`` joins
offline; the store keeps each shard a run, tagged with its shard and batch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


class ShardError(ValueError):
    """The environment names no shard, or an impossible one: one line for the user."""


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    kind: str        # "explicit" | "slurm" | "kubernetes" | "manual"
    batch: str | None

    @property
    def spec(self) -> str:
        return f"{self.index}/{self.count}"

    def as_json(self) -> dict:
        return {"kind": self.kind, "batch": self.batch, "index": self.index, "count": self.count}


def _int(env: Mapping[str, str], name: str) -> int | None:
    v = env.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ShardError(f"{name}={v!r} is not an integer") from None


def _check(index: int, count: int, where: str) -> None:
    if count < 1:
        raise ShardError(f"{where}: shard count {count} < 1")
    if not 0 <= index < count:
        raise ShardError(f"{where}: shard index {index} is outside 0..{count - 1}")


def from_environment(env: Mapping[str, str] | None = None) -> Shard:
    """The shard this process is, or ShardError naming what was looked for."""
    env = os.environ if env is None else env
    idx, cnt = _int(env, "MMACTS_SHARD_INDEX"), _int(env, "MMACTS_SHARD_COUNT")
    batch = env.get("MMACTS_BATCH") or None
    if idx is not None:
        if cnt is None:
            raise ShardError("MMACTS_SHARD_INDEX is set but MMACTS_SHARD_COUNT is not")
        _check(idx, cnt, "MMACTS_SHARD_INDEX/MMACTS_SHARD_COUNT")
        return Shard(idx, cnt, "explicit", batch)
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    if task is not None:
        lo, hi = _int(env, "SLURM_ARRAY_TASK_MIN"), _int(env, "SLURM_ARRAY_TASK_MAX")
        step = _int(env, "SLURM_ARRAY_TASK_STEP") or 1
        count = _int(env, "SLURM_ARRAY_TASK_COUNT")
        if count is None and lo is not None and hi is not None:
            count = (hi - lo) // step + 1
        if count is None:
            raise ShardError("SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor "
                             "SLURM_ARRAY_TASK_MIN/MAX is")
        base = lo if lo is not None else 0
        if (task - base) % step:
            raise ShardError(f"SLURM_ARRAY_TASK_ID={task} is not on the array's step {step} from {base}")
        index = (task - base) // step
        where = f"SLURM_ARRAY_TASK_ID={task} (min {lo}, max {hi}, count {count})"
        if lo is not None and hi is not None and (hi - lo) // step + 1 != count:
            raise ShardError(f"{where}: the array is not contiguous; use --array=0-{count - 1}")
        _check(index, count, where)
        return Shard(index, count, "slurm", env.get("SLURM_ARRAY_JOB_ID") or batch)
    job = _int(env, "JOB_COMPLETION_INDEX")
    if job is not None:
        if cnt is None:
            raise ShardError("JOB_COMPLETION_INDEX is set (a Kubernetes indexed Job) but MMACTS_SHARD_COUNT is "
                             "not: pass the Job's completions as MMACTS_SHARD_COUNT")
        _check(job, cnt, f"JOB_COMPLETION_INDEX={job}, MMACTS_SHARD_COUNT={cnt}")
        return Shard(job, cnt, "kubernetes", batch)
    raise ShardError("--shard auto: no scheduler environment (Slurm SLURM_ARRAY_TASK_ID, Kubernetes "
                     "JOB_COMPLETION_INDEX + MMACTS_SHARD_COUNT, or MMACTS_SHARD_INDEX + MMACTS_SHARD_COUNT)")


def resolve(spec: str | None, env: Mapping[str, str] | None = None) -> tuple[str | None, dict | None]:
    """``--shard`` as given -> (``I/N`` or None, scheduler record for run.json or None)."""
    if spec is None:
        return None, None
    if spec == "auto":
        s = from_environment(env)
        return s.spec, s.as_json()
    parts = spec.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ShardError(f"--shard must be I/N (0-based) or auto, got {spec!r}")
    i, n = int(parts[0]), int(parts[1])
    _check(i, n, f"--shard {spec}")
    env = os.environ if env is None else env
    return f"{i}/{n}", {"kind": "manual", "batch": env.get("MMACTS_BATCH") or None, "index": i, "count": n}
