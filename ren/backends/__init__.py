"""Backends: the NumPy ring kernels and interpreter (the reference), the C and CUDA runners."""
