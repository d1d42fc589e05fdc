"""Ren's code generators: kernel AST -> linearized ops -> rendered source -> compiled library.

``linearize`` flattens a kernel body into an ordered list; a ``Renderer`` (``CRenderer``,
``CUDARenderer``) turns it into source; ``compile_cached`` builds it once per source, compiler and
flags. Whole-polynomial kernels (NTT, rescale, basis extension, automorphisms) come from one
readable template per backend (``templates``).
"""
