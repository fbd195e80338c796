"""Why no split-merge move removes the extra states that slow the number of states.

The number of states mixes slowly in default fits on harder data
(doc/internals.rst, "Default fits on harder data"): beside the true states the
posterior keeps an *extra* state, mostly of one-step visits, whose size does a
random walk under the block moves. A split-merge move could remove it in one
step, and this benchmark measures why none does. It runs one default
``rcd_blocked`` chain per data set and, in every ``--every``-th kept sample,
takes each extra state ``d`` (not among the ``K_true`` largest, at least
``--min-size`` steps) with the partner state ``a`` whose merge with it is the
most probable. On the model with the root weights ``beta`` instantiated (the
direct-assignment form of Teh et al. 2006: ``beta | tables ~ Dir(m_.k, gamma)``,
tables drawn from their Antoniak conditionals given the labels) the posterior
of the labels and ``beta`` has a closed form,

    pi(z, beta) ~ gamma^K prod_k beta_k^-1 beta_u^(gamma-1)
                  prod_j DirMult(n_j. | alpha beta) prod_k p(y_k),

written out here independently of the package (Normal-Inverse-Gamma or
Dirichlet-multinomial marginals at the fit's ``emission_prior_``). Per extra
state the script prints

* ``size``, ``one-step``: its steps, and the share of them in runs of one;
* ``log pi``: ``log pi(merged) - log pi(split)`` (``beta_a + beta_d`` for the
  merged state): above 0 the single merged configuration is the more
  probable one;
* ``log ways``: ``log C(n_a + n_d, n_d)``, the number of ways to choose the
  extra state's steps among the pair's: what keeps it alive is this count of
  nearly equivalent assignments, not any one of them;
* ``log q``: the log probability that a Jain & Neal (2004) restricted Gibbs
  scan proposes the current split, the median over ``--launches`` launches.
  A launch draws two anchors, one in each state, and starts either from a
  uniformly random split of the other steps (Jain and Neal's; ``random:S``
  in ``--configs``) or from all of them with the partner (``anchor:S``:
  the extra state is then grown from one step, as in the posterior it is
  small), and runs ``S`` intermediate scans;
* ``log r``: the merge's log Metropolis-Hastings ratio ``log pi + log q -
  log(beta_a + beta_d)`` (the Jacobian of splitting ``beta`` uniformly), up
  to the O(1) factor of choosing the anchors; ``alpha`` and ``gamma`` are
  held at the chain's means; ``mean acc``: the mean of ``min(1, r)``.

A merge is accepted only when ``log r`` is near 0 or above. The one
proposal that could reach it draws the split from its posterior, which is
spread over up to ``exp(log ways)`` assignments.

Usage::

    python benchmarks/bench_duplicate_states.py [--sets readme phys1d categorical]
        [--samples 3000] [--every 30] [--min-size 15]
        [--configs random:5 anchor:5 anchor:20] [--launches 5]
        [--quick] [--out PATH | -]
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy.special import gammaln

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_defaults import datasets  # noqa: E402
from sk_ihmm import InfiniteHMM  # noqa: E402
from sk_ihmm.datasets import make_gaussian_hmm  # noqa: E402

SETS = ("readme", "phys1d", "categorical")


def load(name):
    """``(X, true_states, emission)``: the README example, or a bench_defaults set
    (``phys1d`` of data seed 1, where four samplers miss the checks; the
    categorical set of data seed 0, where every sampler does)."""
    if name == "readme":
        X, z = make_gaussian_hmm(2000, n_states=4, random_state=0)
        return 1000 * X[:1500] + 20, z[:1500], "gaussian"
    seed = 1 if name == "phys1d" else 0
    X, z, _, emission = datasets(names=(name,), data_seed=seed)[name]
    return X, z, emission


class NormalInverseGamma:
    """Marginal likelihood of one state's observations (1-D Gaussian)."""

    def __init__(self, prior, y):
        self.mu0, self.l0 = prior["mu0"], prior["lambda0"]
        self.a0, self.b0 = prior["a0"], prior["b0"]
        self.y = y.astype(float)

    def add(self, s, t, sign=1):
        s += sign * np.array([1.0, self.y[t], self.y[t] ** 2])

    def stats_of(self, steps):
        v = self.y[steps]
        return np.array([v.size, v.sum(), (v * v).sum()])

    def log_marginal(self, s):
        n, sm, ss = s
        if n == 0:
            return 0.0
        mean = sm / n
        ln, an = self.l0 + n, self.a0 + n / 2
        bn = (self.b0 + 0.5 * (ss - n * mean * mean)
              + self.l0 * n * (mean - self.mu0) ** 2 / (2 * ln))
        return (gammaln(an) - gammaln(self.a0) + self.a0 * np.log(self.b0) - an * np.log(bn)
                + 0.5 * (np.log(self.l0) - np.log(ln)) - n / 2 * np.log(2 * np.pi))

    def log_pred(self, s, t):
        s2 = s.copy()
        self.add(s2, t)
        return self.log_marginal(s2) - self.log_marginal(s)


class DirichletMultinomial:
    """Marginal likelihood of one state's symbols (categorical)."""

    def __init__(self, prior, y):
        self.c, self.S = prior["concentration"], prior["n_symbols"]
        self.y = y.astype(int)

    def add(self, s, t, sign=1):
        s[self.y[t]] += sign

    def stats_of(self, steps):
        return np.bincount(self.y[steps], minlength=self.S).astype(float)

    def log_marginal(self, s):
        n = s.sum()
        return (gammaln(self.S * self.c) - gammaln(self.S * self.c + n)
                + np.sum(gammaln(self.c + s) - gammaln(self.c)))

    def log_pred(self, s, t):
        return np.log((s[self.y[t]] + self.c) / (s.sum() + self.S * self.c))


def transition_counts(z, K):
    """``(K + 1, K)`` counts; row ``K`` is the start restaurant."""
    n = np.zeros((K + 1, K))
    n[K, z[0]] += 1
    np.add.at(n, (z[:-1], z[1:]), 1)
    return n


def log_target(z, beta, beta_u, alpha, gamma, family):
    K = beta.size
    n = transition_counts(z, K)
    ab = alpha * beta
    lp = K * np.log(gamma) - np.log(beta).sum() + (gamma - 1) * np.log(beta_u)
    for j in range(K + 1):
        if n[j].sum():
            lp += (gammaln(alpha) - gammaln(alpha + n[j].sum())
                   + np.sum(gammaln(ab + n[j]) - gammaln(ab)))
    for k in range(K):
        lp += family.log_marginal(family.stats_of(np.flatnonzero(z == k)))
    return lp


def draw_beta(z, K, alpha, gamma, rng, rounds=20):
    """``beta`` from its conditional given the labels: Gibbs over tables and ``beta``."""
    n = transition_counts(z, K).astype(int)
    beta = np.full(K + 1, 1.0 / (K + 1))
    for _ in range(rounds):
        m = np.zeros(K)
        for j, k in zip(*np.nonzero(n)):
            theta = alpha * beta[k]
            m[k] += np.sum(rng.random(n[j, k]) < theta / (np.arange(n[j, k]) + theta))
        beta = rng.dirichlet(np.r_[m, gamma])
    return beta[:K], beta[K]


def restricted_scan(z, steps, a, d, beta, alpha, family, rng=None, force=None):
    """One Gibbs scan of ``steps`` (time order) between labels ``a`` and ``d``,
    in place; returns the log probability of the labels it chose (``force``
    gives them instead of drawing)."""
    T, K = z.size, beta.size
    n = transition_counts(z, K)
    n_out = n.sum(axis=1)
    stats = {c: family.stats_of(np.flatnonzero(z == c)) for c in (a, d)}
    log_q = 0.0
    for t in steps:
        prev = z[t - 1] if t > 0 else K
        nxt = z[t + 1] if t + 1 < T else -1
        cur = z[t]
        n[prev, cur] -= 1
        n_out[prev] -= 1
        if nxt >= 0:
            n[cur, nxt] -= 1
            n_out[cur] -= 1
        family.add(stats[cur], t, -1)
        lw = np.empty(2)
        for i, c in enumerate((a, d)):
            w = np.log(n[prev, c] + alpha * beta[c])
            if nxt >= 0:
                w += (np.log(n[c, nxt] + alpha * beta[nxt] + (prev == c == nxt))
                      - np.log(n_out[c] + alpha + (prev == c)))
            lw[i] = w + family.log_pred(stats[c], t)
        p = np.exp(lw - lw.max())
        p /= p.sum()
        if force is None:
            c = d if rng.random() < p[1] else a
        else:
            c = force[t]
        log_q += np.log(p[1] if c == d else p[0])
        z[t] = c
        n[prev, c] += 1
        n_out[prev] += 1
        if nxt >= 0:
            n[c, nxt] += 1
            n_out[c] += 1
        family.add(stats[c], t)
    return log_q


def examine(z, k_true, alpha, gamma, family, args, rng):
    """Rows for the extra states of one sample (labels compacted to 0..K-1)."""
    _, z = np.unique(z, return_inverse=True)
    K = z.max() + 1
    if K <= k_true:
        return []
    size = np.bincount(z, minlength=K)
    beta, beta_u = draw_beta(z, K, alpha, gamma, rng)
    lp_split = log_target(z, beta, beta_u, alpha, gamma, family)
    rows = []
    for d in np.argsort(-size, kind="stable")[k_true:]:
        if size[d] < args.min_size:
            continue
        best = None
        for a in range(K):
            if a == d:
                continue
            zm = np.where(z == d, a, z)
            keep = np.arange(K) != d
            bm = beta.copy()
            bm[a] += beta[d]
            _, zm = np.unique(zm, return_inverse=True)
            lp = log_target(zm, bm[keep], beta_u, alpha, gamma, family)
            if best is None or lp > best[1]:
                best = (a, lp)
        a, lp_merge = best
        idx = np.flatnonzero(z == d)
        one_step = np.mean([(t == 0 or z[t - 1] != d) and (t + 1 == z.size or z[t + 1] != d)
                            for t in idx])
        pair = np.flatnonzero((z == a) | (z == d))
        n_a, n_d = size[a], size[d]
        log_ways = gammaln(n_a + n_d + 1) - gammaln(n_a + 1) - gammaln(n_d + 1)
        log_pi = lp_merge - lp_split
        row = [n_d, one_step, log_pi, log_ways]
        for launch_kind, n_scans in args.configs:
            log_qs = []
            for _ in range(args.launches):
                t1, t2 = rng.choice(np.flatnonzero(z == a)), rng.choice(idx)
                rest = pair[(pair != t1) & (pair != t2)]
                launch = z.copy()
                launch[rest] = (np.where(rng.random(rest.size) < 0.5, a, d)
                                if launch_kind == "random" else a)
                for _ in range(n_scans):
                    restricted_scan(launch, rest, a, d, beta, alpha, family, rng=rng)
                log_qs.append(restricted_scan(launch, rest, a, d, beta, alpha, family, force=z))
            log_q = float(np.median(log_qs))
            row += [log_q, log_pi + log_q - np.log(beta[a] + beta[d])]
        rows.append(row)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    p.add_argument("--samples", type=int, default=3000)
    p.add_argument("--every", type=int, default=30)
    p.add_argument("--min-size", type=int, default=15)
    p.add_argument("--scans", type=int, default=5)
    p.add_argument("--launches", type=int, default=5)
    p.add_argument("--configs", nargs="+", default=["random:5", "anchor:5", "anchor:20"],
                   help="launch:scans pairs, launch 'random' or 'anchor'")
    p.add_argument("--quick", action="store_true", help="600 samples, every 100th")
    p.add_argument("--out", default=None,
                   help="table file (default results/duplicate_states.txt; - for none)")
    args = p.parse_args(argv)
    if args.quick:
        args.samples, args.every = 600, 100
    configs = []
    for c in args.configs:
        launch_kind, _, n_scans = c.partition(":")
        if launch_kind not in ("random", "anchor") or not n_scans.isdigit():
            p.error(f"--configs takes launch:scans with launch random or anchor; got {c!r}")
        configs.append((launch_kind, int(n_scans)))
    args.configs = configs
    out = args.out or os.path.join(HERE, "results", "duplicate_states.txt")
    shown = sys.argv[1:] if argv is None else argv
    lines = ["# python benchmarks/bench_duplicate_states.py " + " ".join(shown),
             "# one default rcd_blocked chain per set (random_state=0, 1000 burn-in sweeps, "
             "%d kept); extra states of >= %d steps in every %d-th sample; medians over them, "
             "the share of merges with log r > log 0.01 and their mean acceptance; %d launches "
             "per state"
             % (args.samples, args.min_size, args.every, args.launches),
             "",
             "%-12s %5s %6s %9s %8s %9s  %-10s %9s %9s %8s %8s" % (
                 "set", "extra", "size", "one-step", "log pi", "log ways", "launch", "log q",
                 "log r", "r>0.01", "mean acc")]
    print("\n".join(lines), flush=True)
    rng = np.random.default_rng(0)
    t0 = time.time()
    for name in args.sets:
        X, z_true, emission = load(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = InfiniteHMM(emission=emission, n_chains=1, max_time=0, n_burnin=1000,
                                n_samples=args.samples, random_state=0).fit(X)
        prior = model.emission_prior_
        family = (DirichletMultinomial if emission == "categorical" else NormalInverseGamma)(
            prior, X[:, 0])
        alpha = float(np.mean(model.trace_["alpha"]))
        gamma = float(np.mean(model.trace_["gamma"]))
        k_true = np.unique(z_true).size
        rows = []
        for zs in model.state_samples_[0][::args.every]:
            rows += examine(np.asarray(zs), k_true, alpha, gamma, family, args, rng)
        n_cols = 4 + 2 * len(args.configs)
        r = np.array(rows) if rows else np.full((1, n_cols), np.nan)
        med = np.median(r, axis=0)
        for i, (launch_kind, n_scans) in enumerate(args.configs):
            head = ("%-12s %5d %6.0f %9.2f %8.1f %9.1f" % (name, len(rows), *med[:4]) if i == 0
                    else " " * 54)
            log_r = r[:, 5 + 2 * i]
            line = "%s  %-10s %9.1f %9.1f %8.2f %8.3f" % (
                head, "%s/%d" % (launch_kind, n_scans), med[4 + 2 * i], med[5 + 2 * i],
                np.mean(log_r > np.log(0.01)), np.mean(np.exp(np.minimum(log_r, 0.0))))
            lines.append(line)
            print(line, flush=True)
    lines.append("# wall time %.0f s" % (time.time() - t0))
    print(lines[-1])
    if out != "-":
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
