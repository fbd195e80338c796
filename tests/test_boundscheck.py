"""The kernel tests again, with numba's bounds checking on.

Numba does not check indices by default: a kernel (or a test) that reads past
an array reads whatever memory follows, and the result depends on the
machine and on what ran before. That happened once: a test built Gaussian
parameters with two columns where the family's layout has four, passed on
the development machine and failed in CI. With ``NUMBA_BOUNDSCHECK=1`` every
such access raises ``IndexError`` instead, deterministically.

The flag is read when numba compiles, so the kernel test modules run in a
child process with a cache directory of their own (the compiled code differs,
and the checked build must not be cached beside the normal one). About two
and a half minutes, most of it compilation.
"""

import os
import subprocess
import sys

import pytest

#: Test modules that drive the numba kernels directly (the estimator and
#: scikit-learn tests reach the same kernels through these paths).
KERNEL_TESTS = [
    "tests/test_hcrp.py",
    "tests/test_emissions.py",
    "tests/test_messages.py",
    "tests/test_exact_rcd_gibbs.py",
    "tests/test_exact_rcd_blocked.py",
    "tests/test_exact_split_merge.py",
    "tests/test_exact_pgas.py",
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.boundscheck
def test_kernel_tests_pass_with_numba_boundscheck(tmp_path):
    if os.environ.get("NUMBA_BOUNDSCHECK") == "1":
        pytest.skip("already running with bounds checking")
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
           *KERNEL_TESTS]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=3600)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
    assert proc.returncode == 0, f"kernel tests fail with NUMBA_BOUNDSCHECK=1:\n{tail}"
