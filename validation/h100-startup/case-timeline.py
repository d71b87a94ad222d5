"""Where each case's wall time goes, from a run's per-case timing marks (MMACTS_TIMING_CASES=1).

usage: python validation/h100-startup/case-timeline.py MARKS_FILE
Prints, summed over the cases of a single-process run: pytest before the executor, the executor,
after it until the record is written, the gap until pytest starts the next case, and the executor's
CPU time (the process's, all threads)."""

from __future__ import annotations

import statistics
import sys

from mmacts.runner import timing


def main(path: str) -> None:
    marks = timing.read(path)
    seq = [(t, n) for t, _who, n in marks if n in ("case_start", "exec_start", "exec_end", "case_written")]
    parts: dict[str, list[float]] = {"before executor": [], "executor": [], "after executor": [], "between cases": []}
    last_written = None
    i = 0
    while i + 3 < len(seq):
        names = [n for _, n in seq[i:i + 4]]
        if names != ["case_start", "exec_start", "exec_end", "case_written"]:
            i += 1
            continue
        (t0, _), (t1, _), (t2, _), (t3, _) = seq[i:i + 4]
        if last_written is not None:
            parts["between cases"].append(t0 - last_written)
        parts["before executor"].append(t1 - t0)
        parts["executor"].append(t2 - t1)
        parts["after executor"].append(t3 - t2)
        last_written = t3
        i += 4
    cpu = [float(n.split("=", 1)[1]) / 1e3 for _t, _who, n in marks if n.startswith("exec_cpu_ms=")]
    if cpu:
        parts["executor CPU"] = cpu
    n = len(parts["executor"])
    print(f"{n} cases")
    for name, xs in parts.items():
        if xs:
            print(f"  {name:16} sum {sum(xs):7.3f} s  median {statistics.median(xs) * 1e3:7.2f} ms  "
                  f"max {max(xs) * 1e3:7.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1])
