"""Validation tools: what checks the PTX VM against silicon, kept out of the VM and out of the suite.

``corpus`` (the PTX-semantics corpus and its silicon records, issue 12), ``fuzz`` (differential fuzzing of the
VM's scalar instructions, issue 22) and ``fuzz_tc`` (the same for the Hopper tensor-core paths) build kernels
here, run them on a GPU with CuPy alone (their ``device_run`` scripts) and replay what the GPU answered on the VM.

Why a package of its own, on the top floor (issue 25): these tools *use* the VM, the PTX toolchain and, for
real launches, the suites' drivers -- they are clients of every lower floor, so inside ``mmacts/ptxvm`` (where the
corpus used to live) they made the VM package import a suite, and as siblings of the suite's own packages
(``mmacts/fuzz``, ``mmacts/fuzz_tc``) they read like part of the product. Nothing below imports them. Their
records live in the repository's ``validation/`` folder (one level under the root), beside the GPU runs.
"""
