"""One xdist worker per GPU: pin worker ``gwK`` to GPU K with CUDA_VISIBLE_DEVICES.

Why the environment variable and not ``cupy.cuda.Device(k).use()``: the CUDA
driver reads CUDA_VISIBLE_DEVICES once, at initialisation; a worker that sees
only its own GPU cannot launch on another one by mistake, and device 0 of every
worker is its GPU, so the backends need not know about pinning. It must
therefore be set in the worker before anything initialises CUDA (the plugin does
it in the worker's ``pytest_configure``).

Counting the GPUs must not initialise CUDA either (that would fix the visible set
of the process counting them), so it reads CUDA_VISIBLE_DEVICES, then
``/proc/driver/nvidia/gpus``, then ``nvidia-smi -L``. ``MMACTS_GPUS=N`` overrides
the count (tests on a CPU machine; or to leave some GPUs of a host alone).

Workers beyond the GPU count: with ``spare="none"`` they get no GPU (compile and
model work; what the brief of the fleet runner asks for); with ``spare="share"``
they share GPUs round robin. ``--backend cuda`` uses ``share``: an explicit
hardware run must not skip cases because a worker drew no GPU.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, MutableMapping
from pathlib import Path

PINNED_ENV = "MMACTS_PINNED_GPU"
"""Set in a pinned worker: the GPU id it was given ('' = none), for the report's device column."""

_WORKER_RE = re.compile(r"^gw(\d+)$")


def _physical_count() -> int:
    proc = Path("/proc/driver/nvidia/gpus")
    if proc.is_dir():
        n = sum(1 for _ in proc.iterdir())
        if n:
            return n
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            return 0
        return sum(1 for line in out.splitlines() if line.startswith("GPU "))
    return 0


def visible_gpus(env: Mapping[str, str] | None = None) -> list[str]:
    """The GPU ids workers may be pinned to, in order (ids as CUDA_VISIBLE_DEVICES spells them)."""
    env = os.environ if env is None else env
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    listed = None if cvd is None else [x.strip() for x in cvd.split(",") if x.strip()]
    override = env.get("MMACTS_GPUS")
    if override is not None and override.strip():
        n = int(override)
        if n < 0:
            raise ValueError(f"MMACTS_GPUS must be >= 0, got {override!r}")
        return listed[:n] if listed is not None and len(listed) >= n else [str(i) for i in range(n)]
    if listed is not None:
        return listed
    return [str(i) for i in range(_physical_count())]


def worker_index(worker_id: str | None) -> int | None:
    """``gw3`` -> 3; anything else (the controller, no xdist) -> None."""
    m = _WORKER_RE.match(worker_id or "")
    return int(m.group(1)) if m else None


def gpu_for_worker(worker_id: str | None, gpus: list[str], spare: str = "none") -> str | None:
    """The CUDA_VISIBLE_DEVICES value for a worker: one GPU id, '' for none, None to leave it alone."""
    idx = worker_index(worker_id)
    if idx is None:
        return None
    if idx < len(gpus):
        return gpus[idx]
    if spare == "share" and gpus:
        return gpus[idx % len(gpus)]
    if spare not in ("none", "share"):
        raise ValueError(f"spare must be 'none' or 'share', got {spare!r}")
    return ""


def pin_worker(worker_id: str | None, env: MutableMapping[str, str] | None = None,
               spare: str = "none") -> str | None:
    """Pin this worker (sets CUDA_VISIBLE_DEVICES and MMACTS_PINNED_GPU); returns the value set."""
    env = os.environ if env is None else env
    value = gpu_for_worker(worker_id, visible_gpus(env), spare)
    if value is None:
        return None
    env["CUDA_VISIBLE_DEVICES"] = value
    env[PINNED_ENV] = value
    return value


def device_label(name: str, env: Mapping[str, str] | None = None) -> str:
    """``NVIDIA H200 #1``: the device name plus the GPU id of the host that ran the case."""
    env = os.environ if env is None else env
    gid = env.get(PINNED_ENV)
    if not gid:
        cvd = env.get("CUDA_VISIBLE_DEVICES")
        gid = cvd.split(",")[0].strip() if cvd and cvd.strip() else "0"
    return f"{name} #{gid}"
