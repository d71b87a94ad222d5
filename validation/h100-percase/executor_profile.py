"""Where the executor's per-case time goes, without pytest: every case of a suite's full level
executed in this process as the plugin does (one Executor per session, answers cached), several
sessions in a row so the last ones are warm; the last one is profiled.

usage: python validation/h100-percase/executor_profile.py [SUITE] [--fake-gpu] [--sessions N] [-k TEXT]
  --fake-gpu: no GPU needed: the probe says H100 and each launch returns the oracle's own answer
  (the CPU side alone, for comparing a device's CPU with this machine's).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import time
from collections import defaultdict

from mmacts.backends import cuda_runtime, execute, gpu
from mmacts.compare.answer_cache import AnswerCache
from mmacts.core.driver import LaunchResult
from mmacts.core.suites import load_driver


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", nargs="?", default="hopper_validation")
    ap.add_argument("--fake-gpu", action="store_true")
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    drv = load_driver(args.suite)
    cases = [c for c in drv.cases("full") if args.k in c.case_id]
    if args.fake_gpu:
        status = gpu.GpuStatus(True, name="NVIDIA H100 (fake)", compute_capability=(9, 0), count=1)
        execute.gpu.probe = lambda: status
        cuda_runtime.load_module = lambda image: object()
        want = {c.case_id: drv.expected(c, drv.make_inputs(c)).want for c in cases}
        drv.launch = lambda batch, inputs, module: [
            LaunchResult(got=want[c.case_id].copy(), kernel_us=7.0) for c in batch]
    root = tempfile.mkdtemp(prefix="mmacts-answers-")
    by_form: dict[str, list] = defaultdict(list)
    for c in cases:
        by_form[repr(c.form_key)].append(c)
    modules: dict = {}

    def session(prof: cProfile.Profile | None = None) -> list[float]:
        ex = execute.Executor(backend="cuda", answers=AnswerCache(root), all_cases=dict(by_form))
        ex._modules = modules  # assembled once (a process keeps its modules): cases are what is timed
        times, slow = [], []
        if prof:
            prof.enable()
        for c in cases:
            t = time.perf_counter()
            rec = ex.execute(drv, c)
            times.append(time.perf_counter() - t)
            slow.append((times[-1], c.case_id))
            if rec["status"] not in ("pass", "observed", "skip"):
                raise SystemExit(f"{c.case_id}: {rec['status']}: {rec['message']}")
        if prof:
            prof.disable()
        session.slowest = sorted(slow, reverse=True)[:6]
        return times

    try:
        for i in range(args.sessions):
            ts = sorted(session())
            print(f"session {i}: {len(ts)} cases, {sum(ts) * 1e3:.1f} ms, mean {sum(ts) / len(ts) * 1e3:.2f} ms/case, "
                  f"median {ts[len(ts) // 2] * 1e3:.2f} ms, max {ts[-1] * 1e3:.1f} ms")
        print("slowest of the last session:", ", ".join(f"{c} {t * 1e3:.1f} ms" for t, c in session.slowest))
        prof = cProfile.Profile()
        ts = session(prof)
        print(f"profiled session: mean {sum(ts) / len(ts) * 1e3:.2f} ms/case (profiler on)")
        st = pstats.Stats(prof)
        st.sort_stats("cumulative").print_stats(45)
        st.sort_stats("tottime").print_stats(30)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
