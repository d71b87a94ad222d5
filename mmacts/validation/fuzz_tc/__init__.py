"""Differential fuzzing of the Hopper tensor-core paths the PTX VM models (issue 22, item 2).

``gen`` draws seeded, deterministic launches of ``mma.sync`` m16n8k32 fp8 (f32/f16 accumulators, chained
K-steps) and ``wgmma`` fp8/bf16 (random N, K-steps, shared-memory descriptors with random start, leading and
stride byte offsets, base offsets and every swizzle mode, K-/MN-major, negated operands, per-step scale-d)
over data that mixes random codes with NaN/Inf/subnormal/max-finite operands and signed zeros.
``build`` assembles them for a GPU, ``device_run`` runs them there (CuPy only), ``store`` keeps what the GPU
answered under ``validation/fuzz-tc/`` and ``test_replay`` replays every recorded launch on the VM, bit for bit.
"""
