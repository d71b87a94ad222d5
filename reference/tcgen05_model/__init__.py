"""The record-level CPU model of ``tcgen05.mma ... .block_scale``, kept for what only it does.

The PTX VM (``mmacts.ptxvm.tcgen05``) runs every tcgen05 case; this package is NOT a second backend the
executor chooses (the ``tcgen05_blockscale`` driver's ``vm_reason`` is always None, so the executor never
calls its ``run_record_model``). It is kept because it alone does these things (issue 25, item 3):

* ``program``: the per-CTA program record (``CtaProgram``, ``MmaOperands``, ``CP_CODES``) that the host
  builders (``suites.tcgen05_blockscale.build`` / ``plain``) write and the kernel packer
  (``mmacts.ptx.tcgen05_kernels.pack``) turns into the kernel's parameters: the one definition of what
  a tcgen05 kernel executes.
* ``machine.d_placement`` / ``layout_of`` / ``decode_d`` / ``scale_count`` and ``operands.container_for`` /
  ``a_tmem_elem`` / ``A_TMEM_FP4_SHIFT`` / ``A_TMEM_FP6_SHIFT``: the host side's reading of where D lives
  and how operands are held (the builders place D and read it back from the read-back window with them).
  The ``dplace-host.*`` mutants (``mmacts.mutants.registry``, ``MACHINE``) replace ``d_placement`` by name.
* ``machine.run``: executes those programs without PTX, every operand decoded by the reference decoders
  (``smem_image.decode_operand``, ``tmem_image.read_sf`` / ``read_a``, ``cp_decompress.cp_to_tmem``), under
  ``Hypotheses`` the spec leaves open (SF lane rule, sparse metadata, a ``reference.numeric_model``
  arithmetic). Its users: the tcgen05 driver's diagnosis (``_alternatives``: what the MMA would compute
  with another SF ID, to name the knob a failing case matches); the VM's decisive cross-check
  (``mmacts/ptxvm/tcgen05/test_mma.py``: every standard block-scaled case, VM == model bit for bit); the
  encoder/decoder round trips (``reference/tcgen05_model/test_machine.py``,
  ``suites/tcgen05_blockscale/test_build.py``, ``suites/descriptors/test_row_citations.py``); the driver's
  ``run_record_model`` (its tests, ``suites/tcgen05_blockscale/test_driver.py``); and
  ``suites.probes.blockscale_paths.tcgen05_model_diagonal`` (its test).

It shares nothing with the VM (``mmacts/ptxvm/test_independence.py``), which is why the cross-check means
something: two readings of the spec written apart agree.
"""
