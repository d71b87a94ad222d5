"""Host-side objects a GPU program builds before a launch (tensor maps), written from the CUDA driver API
documentation and the PTX ISA, never from the VM's decoders (``mmacts/ptxvm/test_independence.py``)."""

from mmacts.ptxvm.host.tensormap import TensorMapError, encode_im2col, encode_tiled

__all__ = ["TensorMapError", "encode_im2col", "encode_tiled"]
