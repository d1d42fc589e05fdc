"""The CUDA renderer: every elementwise kernel shape compiles to PTX with nvcc (no GPU needed)."""

import re
import shutil
import subprocess

import pytest

from ren.codegen.cuda import CUDARenderer
from ren.codegen.linearize import linearize
from ren.engine.schedule import schedule
from ren.ir import DType, Node, Op
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes

RINGS = [
    pytest.param(RingSpec(8, (17, 97)), id="N=8/limbs=2/u32"),
    pytest.param(RingSpec(64, ntt_primes(64, 60, 3)), id="N=64/limbs=3/u64"),
]


def bodies(ring: RingSpec) -> list:
    a, b, c, d = (Poly.uniform(ring, rng=i).ntt().realize() for i in range(4))
    x = Poly.uniform(ring, rng=9).realize()  # coefficient form
    progs = [((a + b) * (c - 1)).rotate(3) + d, -(x * 5) + 7, a.conjugate() * b - a]
    sink = Node(Op.SINK, DType.VOID, tuple(p.node for p in progs))
    return [k.ast for k in schedule(sink)[0] if k.info.kind == "elementwise"]


@pytest.mark.parametrize("ring", RINGS)
def test_render_is_deterministic_and_uses_cuda_forms(ring):
    for ast in bodies(ring):
        src = CUDARenderer().render(linearize(ast), "k")
        assert src == CUDARenderer().render(linearize(ast), "k")
        assert 'extern "C" __global__' in src and "__launch_bounds__(256)" in src
        assert "blockIdx.x * blockDim.x + threadIdx.x" in src and "__int128" not in src
        assert ("__umul64hi" if ring.dtype == "u64" else "__umulhi") in src


@pytest.mark.nvcc
@pytest.mark.parametrize("ring", RINGS)
def test_every_kernel_compiles_to_ptx(ring, tmp_path):
    for i, ast in enumerate(bodies(ring)):
        name = f"ren_k{i}"
        cu = tmp_path / f"{name}.cu"
        cu.write_text(CUDARenderer().render(linearize(ast), name))
        ptx = tmp_path / f"{name}.ptx"
        cmd = [shutil.which("nvcc"), "--ptx", "-arch=sm_90", "-o", str(ptx), str(cu)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert re.search(rf"\.entry {name}\(", ptx.read_text())
