"""``mmacts repro CASE [--run RUN] --out DIR``: a standalone folder for one case, for a driver bug report.

The launch is captured by running the suite driver's own ``launch`` against a
:class:`~mmacts.backends.cuda_runtime.RecordingModule`, so the folder holds exactly what the cuda
backend would launch (entry, grid, block, shared memory, every parameter). The expected output
buffer is the PTX VM's raw output for that launch, kept only after it is replayed through the same
``launch`` and the reference accepts it (``expected_verified`` in launch.json says whether it did).
Two launchers need nothing of mmacts: ``launch.py`` (CuPy) and ``launch.cpp`` (CUDA driver API).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from mmacts import ptxvm  # module attributes: tests patch ptxvm.load_module, execute.vm_reason
from mmacts.backends import assembler, execute
from mmacts.backends.cuda_runtime import RecordingModule
from mmacts.backends.execute import vm_profile
from mmacts.compare.compare import compare
from mmacts.core.driver import as_driver
from mmacts.runner.explain import _run_record, find_case

OUT_FILL = 0xFF
"""Output buffers start as 0xFF bytes, as the cuda runtime and the PTX VM fill them."""

TEMPLATES = Path(__file__).resolve().parent
"""Beside this file: ``repro_launch.py`` and ``repro_launch.cpp``, copied into each folder."""


class ReproError(Exception):
    """A one-line reason why no folder can be made (exit 2)."""


def _refusal(driver: Any, case: Any) -> str | None:
    driver = as_driver(driver)
    if driver.compile_only:
        return f"{case.case_id}: suite {case.suite} is compile-only (no kernel is launched)"
    if driver.judges_own_cases:
        return f"{case.case_id}: suite {case.suite} has no kernel launch to reproduce (it judges its cases itself)"
    why = execute.vm_reason(driver, case)
    if why is not None:
        return (f"{case.case_id}: the case runs on a record-level model, not a kernel on the PTX VM ({why}); "
                "no expected output buffer can be made")
    return None


def capture(driver: Any, case: Any) -> dict[str, Any]:
    """The one launch ``launch`` makes for ``case`` alone, its inputs and the expected output buffers."""
    inputs = driver.make_inputs(case)
    vm = ptxvm.load_module(driver.module_ptx(case), case.arch, profile=vm_profile(driver, case))
    rec = RecordingModule(b"")
    rec.rt.info = vm.rt.info  # type: ignore[attr-defined]  # a driver that asks the device's compute capability
    driver.launch([case], [inputs], rec)
    if len(rec.launches) != 1:
        raise ReproError(f"{case.case_id}: launch made {len(rec.launches)} launches; repro handles exactly one")
    launch = rec.launches[0]
    n_out = sum(1 for kind, _, _ in launch["args"] if kind == "out")
    # the same launch on the PTX VM, keeping every output buffer it allocates, in allocation order
    allocated: list[Any] = []
    empty = vm.rt.empty

    def keep(shape: Any, dtype: Any) -> Any:
        allocated.append(empty(shape, dtype))
        return allocated[-1]

    vm.rt.empty = keep  # type: ignore[method-assign]
    vm_res = driver.launch([case], [inputs], vm)[0]
    if vm_res.status != "ok" or len(allocated) != n_out:
        raise ReproError(f"{case.case_id}: the PTX VM launch did not complete ({vm_res.status}: "
                         f"{vm_res.extra.get('reason') or vm_res.extra.get('message', '')})")
    outs = {i: vm.rt.to_host(a) for i, a in enumerate(allocated)}
    # replay the VM's buffers through launch: does the reference accept them?
    replay = RecordingModule(b"", replay=outs)
    replay.rt.info = vm.rt.info  # type: ignore[attr-defined]
    got = driver.launch([case], [inputs], replay)[0].got
    exp = driver.expected(case, inputs)
    if got is None:
        return {"launch": launch, "outs": outs, "exp": exp, "verdict": "no output decoded", "mismatches": None}
    cmp = compare(got, exp)
    return {"launch": launch, "outs": outs, "exp": exp, "verdict": cmp.status, "mismatches": cmp.mismatches}


def _param_rows(launch: dict[str, Any], outs: dict[int, np.ndarray]) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    params, files = [], {}
    for i, (kind, idx, arr) in enumerate(launch["args"]):
        arr = np.asarray(arr)
        row: dict[str, Any] = {"index": i, "kind": kind, "dtype": arr.dtype.str, "shape": list(arr.shape),
                               "nbytes": int(arr.nbytes)}
        if kind == "scalar":
            row["bytes_hex"] = arr.astype(arr.dtype.newbyteorder("<")).tobytes().hex()
            row["value"] = arr.item()
        elif kind == "in":
            row["file"] = f"in{i}.bin"
            files[row["file"]] = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        else:
            row["fill"] = OUT_FILL
            row["expected"] = f"expected{i}.bin"
            want = np.ascontiguousarray(outs[idx])
            files[row["expected"]] = want.astype(want.dtype.newbyteorder("<")).tobytes()
            if len(files[row["expected"]]) != row["nbytes"]:
                raise ReproError(f"output {i}: the VM's buffer has {len(files[row['expected']])} bytes, "
                                 f"the launch {row['nbytes']}")
        params.append(row)
    return params, files


def _cpp(spec: dict[str, Any]) -> str:
    """``launch.cpp`` with the launch written in: no JSON parsing in C++."""
    lines = []
    for p in spec["params"]:
        i = p["index"]
        if p["kind"] == "scalar":
            body = ", ".join(f"0x{p['bytes_hex'][k:k + 2]}" for k in range(0, len(p["bytes_hex"]), 2))
            lines.append(f"  alignas(8) static unsigned char s{i}[] = {{{body}}};  // {p['dtype']} {p['value']}")
        elif p["kind"] == "in":
            lines.append(f'  CUdeviceptr d{i} = upload("{p["file"]}", {p["nbytes"]});')
        else:
            lines.append(f"  CUdeviceptr d{i} = output({p['nbytes']}, {p['fill']});")
    ptrs = ", ".join(f"s{p['index']}" if p["kind"] == "scalar" else f"&d{p['index']}" for p in spec["params"])
    lines.append(f"  void* params[] = {{{ptrs}}};")
    g, b = (list(spec["grid"]) + [1, 1])[:3], (list(spec["block"]) + [1, 1])[:3]
    lines.append(f'  CK(cuModuleGetFunction(&fn, mod, "{spec["entry"]}"));')
    if spec["shared_mem"] > 48 * 1024:
        lines.append(f"  CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "
                     f"{spec['shared_mem']}));")
    lines.append(f"  CK(cuLaunchKernel(fn, {g[0]}, {g[1]}, {g[2]}, {b[0]}, {b[1]}, {b[2]}, {spec['shared_mem']}, "
                 "0, params, 0));")
    lines.append("  CK(cuCtxSynchronize());")
    for p in spec["params"]:
        if p["kind"] == "out":
            lines.append(f'  bad |= check({p["index"]}, d{p["index"]}, "{p["expected"]}", {p["nbytes"]});')
    text = (TEMPLATES / "repro_launch.cpp").read_text()
    return text.replace("  // @LAUNCH@\n", "\n".join(lines) + "\n").replace("@CUBIN@", spec["cubin"])


def _readme(case: Any, spec: dict[str, Any], cap: dict[str, Any], run_note: str) -> str:
    verdict = ("the reference accepts it" if cap["verdict"] == "pass" else
               f"WARNING: the reference does not accept it ({cap['verdict']}, {cap['mismatches']} mismatches)")
    return f"""Reproducer for {case.case_id} (suite {case.suite}, {case.instruction}, {case.arch})

Made by `mmacts repro`. Files:
  kernel.ptx, kernel.cubin   the module (cubin: {spec['ptxas_version']} for {case.arch})
  launch.json                entry {spec['entry']}, grid {spec['grid']}, block {spec['block']},
                             shared memory {spec['shared_mem']} bytes, parameters in order
  in<i>.bin                  input buffer of parameter i (raw little-endian)
  expected<i>.bin            expected contents of output parameter i after the launch
                             (the PTX VM's buffer, replayed through the suite's decoder: {verdict};
                             compare mode {cap['exp'].mode}; output buffers start filled with 0xFF)
  reference.txt              the reference's answer, decoded
{run_note}
Run (GPU, CUDA driver):
  python3 launch.py                 # needs numpy + CuPy
  nvcc -o launch launch.cpp -lcuda && ./launch
  (or: g++ -I$CUDA_HOME/include -o launch launch.cpp -lcuda && ./launch; run it in this folder)
Both print got vs want in hex for the first differing 32-bit words and exit 1 on a mismatch, 0 on a match.
"""


def make(case_id: str, out: str, run_dir: str | None = None) -> Path:
    found = find_case(case_id)
    if found is None:
        raise ReproError(f"no case with id {case_id!r} (try `mmacts list --level full`)")
    driver, case = found
    why = _refusal(driver, case)
    if why:
        raise ReproError(why)
    run_rec = None
    if run_dir is not None:
        run_rec = _run_record(run_dir, case_id)
        if isinstance(run_rec, str):
            raise ReproError(run_rec)

    ptx = driver.module_ptx(case)
    res = assembler.assemble(ptx, case.arch)
    if not res.ok or not res.cubin:
        raise ReproError(f"{case_id}: ptxas did not assemble the module: {res.first_error_line or res.log}")
    cap = capture(driver, case)
    params, files = _param_rows(cap["launch"], cap["outs"])
    la = cap["launch"]
    spec = {"case_id": case_id, "suite": case.suite, "arch": case.arch, "cubin": "kernel.cubin", "ptx": "kernel.ptx",
            "ptxas_version": assembler.ptxas_version(), "entry": la["entry"],
            "grid": [int(x) for x in la["grid"]], "block": [int(x) for x in la["block"]],
            "shared_mem": int(la["shared_mem"]), "params": params,
            "expected_verified": cap["verdict"] == "pass", "compare_mode": cap["exp"].mode}
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.ptx").write_text(ptx)
    (d / "kernel.cubin").write_bytes(res.cubin)
    for name, data in files.items():
        (d / name).write_bytes(data)
    (d / "launch.json").write_text(json.dumps(spec, indent=1) + "\n")
    with np.printoptions(threshold=sys.maxsize, linewidth=160):
        (d / "reference.txt").write_text(f"mode {cap['exp'].mode}\n{cap['exp'].want!r}\n")
    run_note = ""
    if run_rec is not None:
        (d / "run_record.json").write_text(json.dumps(run_rec, indent=1, default=str) + "\n")
        run_note = (f"  run_record.json            what run {run_dir} recorded (status {run_rec.get('status')}, "
                    f"backend {run_rec.get('backend')}); runs keep no raw output buffer,\n"
                    "                             only the decoded mismatch map in this record\n")
    (d / "launch.py").write_text((TEMPLATES / "repro_launch.py").read_text())
    (d / "launch.cpp").write_text(_cpp(spec))
    (d / "README.txt").write_text(_readme(case, spec, cap, run_note))
    return d


def repro(case_id: str, out: str, run_dir: str | None = None) -> int:
    try:
        d = make(case_id, out, run_dir)
    except ReproError as exc:
        print(f"mmacts: error: {exc}", file=sys.stderr)
        return 2
    print(f"{case_id}: reproducer in {d} (python3 {d}/launch.py; build line for launch.cpp in README.txt)")
    return 0
