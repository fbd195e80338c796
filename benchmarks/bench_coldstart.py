"""Cold start: what the first fit after installing costs in JIT compilation.

Every measurement runs in a fresh Python process. "Cold" processes get an
empty ``NUMBA_CACHE_DIR`` (as on a fresh install: nothing compiled yet);
"warm" processes reuse the cache the cold one filled.

Tables:

1. The README example (``InfiniteHMM(random_state=0)`` with every other
   argument at its default, on the built-in 4-state data in physical
   units): wall time of ``import sk_ihmm``, of ``fit`` and of ``predict`` +
   ``score``, the part of ``fit`` numba spent compiling
   (``convergence_["compile_seconds"]``, which ``max_time`` leaves out), and
   the fit's outcome (rounds, K, converged) -- cold, then warm.
2. Compiling everything: one process fits tiny data with every sampler and
   every emission family (``max_time=0``, a few sweeps), then predicts and
   scores; wall time cold and warm.
3. One row per emission family: a fresh process with an empty cache fits 500
   steps of the family's synthetic data (``sk_ihmm.datasets``) with the
   default sampler and ``max_time=0`` (one round: 4 chains of 100 + 100
   sweeps); wall time of the fit and the part of it spent compiling, then
   the same fit warm (a second process on the cache the first filled).

Usage::

    python benchmarks/bench_coldstart.py [--out benchmarks/results/coldstart.txt]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

README_FIT = r"""
import json, time, warnings
t0 = time.perf_counter()
from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import make_gaussian_hmm
t1 = time.perf_counter()
X, true_states = make_gaussian_hmm(2000, n_states=4, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = InfiniteHMM(random_state=0).fit(1000 * X[:1500] + 20)
t2 = time.perf_counter()
model.predict(1000 * X[:1500] + 20)
model.score(1000 * X[1500:] + 20)
t3 = time.perf_counter()
c = model.convergence_
print(json.dumps(dict(import_s=t1 - t0, fit_s=t2 - t1, predict_score_s=t3 - t2,
                      compile_s=c["compile_seconds"], rounds=c["n_rounds"], K=model.n_states_,
                      converged=bool(c["converged"]),
                      warnings=sorted({w.category.__name__ for w in caught}))))
"""

EVERYTHING = r"""
import json, time, warnings
import numpy as np
t0 = time.perf_counter()
from sk_ihmm import InfiniteHMM
from sk_ihmm.samplers import SAMPLERS
from sk_ihmm.datasets import make_categorical_hmm, make_gaussian_hmm, make_multivariate_gaussian_hmm
X1, _ = make_gaussian_hmm(60, 2, random_state=0)
X2, _ = make_multivariate_gaussian_hmm(60, 2, n_features=2, random_state=0)
Xc, _ = make_categorical_hmm(60, 2, n_symbols=4, random_state=0)
data = {"gaussian": X1, "gaussian_2col": X2, "categorical": Xc}
warnings.simplefilter("ignore")
for sampler in sorted(SAMPLERS):
    for name, X in data.items():
        emission = "categorical" if name == "categorical" else "gaussian"
        model = InfiniteHMM(sampler=sampler, emission=emission, n_burnin=2, n_samples=2,
                            n_chains=1, max_time=0, random_state=0).fit(X)
        model.predict(X)
        model.score(X)
print(json.dumps(dict(total_s=time.perf_counter() - t0, n_fits=len(SAMPLERS) * len(data))))
"""


FAMILY_FIT = r"""
import json, sys, time, warnings
import numpy as np
from sk_ihmm import InfiniteHMM
from sk_ihmm import datasets
family = sys.argv[1]
make = {"gaussian": lambda: datasets.make_gaussian_hmm(500, random_state=0),
        "multivariate_gaussian": lambda: datasets.make_multivariate_gaussian_hmm(
            500, n_features=3, random_state=0),
        "categorical": lambda: datasets.make_categorical_hmm(500, random_state=0),
        "poisson": lambda: datasets.make_poisson_hmm(500, random_state=0)}[family]
X, _ = make()
warnings.simplefilter("ignore")
t0 = time.perf_counter()
model = InfiniteHMM(emission=family, max_time=0, random_state=0).fit(X)
c = model.convergence_
print(json.dumps(dict(fit_s=time.perf_counter() - t0, compile_s=c["compile_seconds"],
                      K=model.n_states_, sweeps=model.n_sweeps_)))
"""

FAMILIES = ("gaussian", "multivariate_gaussian", "categorical", "poisson")


def run(code, cache_dir, *args):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                         check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "results", "coldstart.txt"))
    args = parser.parse_args(argv)
    lines = ["# python benchmarks/bench_coldstart.py",
             f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores; wall seconds, fresh process each",
             "", "README example (defaults: max_time=60, 4 chains, rcd_blocked)",
             f"{'cache':6} {'import':>7} {'fit':>7} {'of which compiling':>19} "
             f"{'predict+score':>14} {'rounds':>7} {'K':>3} {'converged':>10} warnings"]
    with tempfile.TemporaryDirectory() as tmp:
        for label in ("cold", "warm"):
            r = run(README_FIT, os.path.join(tmp, "readme"))
            lines.append(f"{label:6} {r['import_s']:7.1f} {r['fit_s']:7.1f} {r['compile_s']:19.1f} "
                         f"{r['predict_score_s']:14.1f} {r['rounds']:7d} {r['K']:3d} "
                         f"{str(r['converged']):>10} {','.join(r['warnings']) or '-'}")
            print(lines[-1], flush=True)
        lines += ["", "every sampler x emission (gaussian 1 col, gaussian 2 cols, categorical):"
                  " fit + predict + score of tiny data",
                  f"{'cache':6} {'fits':>5} {'wall s':>7}"]
        for label in ("cold", "warm"):
            r = run(EVERYTHING, os.path.join(tmp, "all"))
            lines.append(f"{label:6} {r['n_fits']:5d} {r['total_s']:7.1f}")
            print(lines[-1], flush=True)
        lines += ["", "one family per fresh process, empty cache: default sampler, max_time=0,"
                  " 500 steps (cold fit, of which compiling; then the same fit warm)",
                  f"{'family':22} {'cold fit':>8} {'of which compiling':>19} {'warm fit':>8} {'K':>3}"]
        for family in FAMILIES:
            cache = os.path.join(tmp, "family_" + family)
            cold = run(FAMILY_FIT, cache, family)
            warm = run(FAMILY_FIT, cache, family)
            lines.append(f"{family:22} {cold['fit_s']:8.1f} {cold['compile_s']:19.1f} "
                         f"{warm['fit_s']:8.1f} {cold['K']:3d}")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
