"""Ren's engine: the scheduler driver, memory planning, realization and the JIT."""
