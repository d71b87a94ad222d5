"""Differential fuzzing of the PTX VM against silicon (issue 22).

``forms`` is the table of instruction forms the generator draws from (every handler of the VM is
either covered there or named in ``forms.NOT_FUZZED`` with the reason); ``generate`` turns a seed into
a PTX kernel whose every result is stored to its own output slot; ``inputs`` draws per-thread inputs
from edge-value classes and random bits; ``record`` builds a corpus here (PTX, cubins, inputs), runs it
on a GPU (``device_run``, CuPy only) and stores a compact record under ``validation/fuzz/``;
``replay`` runs a record on the VM and names the first differing slot (kernel, thread, instruction,
both values in hex).
"""
