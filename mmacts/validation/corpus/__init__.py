"""PTX-semantics corpus and silicon records: the silicon side of the PTX VM's proof (issue 12).

``kernels``: the corpus generator; ``record``: build / store silicon records; ``device_run.py``: the
GPU-side runner (numpy + CuPy only); ``records``: read the records and compare a VM with them.
"""
