"""Where a sampler's sweep spends its time, per compiled function and per instruction.

A developer's tool, not a benchmark: it runs sweeps of one sampler on the
PGAS paper's Gaussian data (T=4000) under Linux ``perf record`` and maps the
samples onto numba's compiled functions, which ``perf`` itself cannot name
(numba emits no symbols for JIT code). The sampler's functions are compiled
afresh in the profiled process (an empty ``NUMBA_CACHE_DIR``, so their LLVM
modules are at hand); the child prints the address of every compiled
function and saves its machine code, and the parent buckets the sampled
instruction pointers by function. ``--annotate NAME`` disassembles the
function whose symbol contains ``NAME`` (``objdump``) with the share of
samples of each instruction: in the latency-bound loops of the samplers the
samples pile up on the instruction *after* the one waited for (a division,
a load of a value just stored, a mispredicted branch).

Usage, from the repository root::

    python benchmarks/profile_kernels.py --sampler rcd_blocked --states 4
    python benchmarks/profile_kernels.py --sampler pgas --states 10 --annotate _csmc_range

Needs ``perf`` (with ``kernel.perf_event_paranoid`` <= 2, the default) and
``objdump`` (binutils); reads numba internals (``library._final_module``,
``get_pointer_to_function``) written against numba 0.68. Functions inlined
into a kernel (``inline="always"``, and LLVM's own inlining) count as the
kernel.
"""

import argparse
import bisect
import collections
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def _child(args, out_dir):
    """Compile, record every compiled function's address and code, run sweeps."""
    import gc

    import numpy as np
    from numba.core.registry import CPUDispatcher

    from bench_samplers import gaussian_problem
    from sk_ihmm.datasets import make_gaussian_hmm
    from sk_ihmm.samplers import get_sampler

    X, z = make_gaussian_hmm(4000, n_states=args.states, random_state=0)
    prob = gaussian_problem(X)
    smp = get_sampler(args.sampler)
    rng = np.random.default_rng(args.seed)
    state = smp.init(prob, (z + 1).astype(np.int64), rng)
    for _ in range(args.warmup):
        smp.step(state, prob, rng)
    rows, seen = [], set()
    for obj in gc.get_objects():
        if not isinstance(obj, CPUDispatcher):
            continue
        for cres in obj.overloads.values():
            lib = cres.library
            if id(lib) in seen:
                continue
            seen.add(id(lib))
            try:
                functions = list(lib._final_module.functions)
            except Exception:      # loaded from a cache: no module to read
                continue
            for fn in functions:
                if fn.is_declaration:
                    continue
                try:
                    addr = lib.get_pointer_to_function(fn.name)
                except Exception:
                    continue
                if addr:
                    rows.append((addr, fn.name))
    rows.sort()
    maps = []                  # readable mappings: a function's code ends with its own
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(v, 16) for v in line.split()[0].split("-"))
            if line.split()[1].startswith("r"):
                maps.append((lo, hi))
    with open(os.path.join(out_dir, "functions.txt"), "w") as f:
        for i, (addr, name) in enumerate(rows):
            hi = next((h for lo, h in maps if lo <= addr < h), None)
            if hi is None:
                continue
            end = rows[i + 1][0] if i + 1 < len(rows) else hi
            size = min(end, hi, addr + (1 << 16)) - addr
            with open(os.path.join(out_dir, f"{addr:x}.bin"), "wb") as code:
                code.write(ctypes.string_at(addr, size))
            f.write(f"{addr:x} {size} {name}\n")
    t = time.perf_counter()
    for _ in range(args.sweeps):
        smp.step(state, prob, rng)
    ms = (time.perf_counter() - t) / args.sweeps * 1e3
    print(f"{args.sampler}, {args.states}-state data: {ms:.3f} ms per sweep under perf "
          f"(K = {np.unique(state.x).shape[0]})")


def _short(name):
    """``module.function`` from a mangled numba symbol."""
    m = re.match(r"(?:cfunc\.)?_ZN(.*?)B\d", name)
    if not m:
        return name[:80]
    parts, s = [], m.group(1)
    while s and s[0].isdigit():
        n = int(re.match(r"\d+", s).group())
        d = len(str(n))
        parts.append(s[d:d + n])
        s = s[d + n:]
    return (".".join(parts) or name[:80]) + (" (cfunc)" if name.startswith("cfunc.") else "")


def _report(args, out_dir, perf_data):
    funcs = []
    with open(os.path.join(out_dir, "functions.txt")) as f:
        for line in f:
            a, size, name = line.split(None, 2)
            funcs.append((int(a, 16), int(size), name.strip()))
    starts = [a for a, _, _ in funcs]
    script = subprocess.run(["perf", "script", "-i", perf_data, "-F", "ip"],
                            capture_output=True, text=True, check=True).stdout
    ips = [int(tok, 16) for tok in script.split()]
    per_fn, per_ip = collections.Counter(), collections.Counter()
    for ip in ips:
        i = bisect.bisect_right(starts, ip) - 1
        if i >= 0 and ip < starts[i] + funcs[i][1]:
            per_fn[i] += 1
            per_ip[ip] += 1
    jit = sum(per_fn.values())
    print(f"{len(ips)} samples, {jit} in compiled code; share of those by function:")
    for i, c in per_fn.most_common(args.top):
        print(f"  {100 * c / jit:5.1f}%  {_short(funcs[i][2])}")
    if not args.annotate:
        return
    cands = [i for i in range(len(funcs)) if args.annotate in funcs[i][2]]
    if not cands:
        print(f"no compiled function matches {args.annotate!r}")
        return
    i = max(cands, key=lambda j: per_fn[j])
    addr, size, name = funcs[i]
    dis = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64",
                          f"--adjust-vma={addr:#x}", os.path.join(out_dir, f"{addr:x}.bin")],
                         capture_output=True, text=True, check=True).stdout
    total = max(per_fn[i], 1)
    print(f"\n{_short(name)}: {per_fn[i]} samples; instructions with >= "
          f"{args.min_share}% of them (a sample lands after the instruction waited for)")
    for line in dis.splitlines():
        head = line.split(":", 1)[0].strip()
        if not re.fullmatch(r"[0-9a-f]+", head):
            continue
        share = 100 * per_ip.get(int(head, 16), 0) / total
        if share >= args.min_share:
            print(f"  {share:5.1f}%  {line.strip()[:100]}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sampler", default="rcd_blocked")
    p.add_argument("--states", type=int, default=4, choices=(4, 10))
    p.add_argument("--sweeps", type=int, default=3000)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--annotate", default=None, help="part of a function's symbol")
    p.add_argument("--min-share", type=float, default=1.0)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args, args.child)
        return
    for tool in ("perf", "objdump"):
        if shutil.which(tool) is None:
            sys.exit(f"profile_kernels.py needs {tool!r} on the PATH")
    with tempfile.TemporaryDirectory(prefix="sk_ihmm_prof_") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba_cache"))
        perf_data = os.path.join(tmp, "perf.data")
        cmd = ["perf", "record", "-q", "-F", "20000", "-o", perf_data, sys.executable,
               os.path.abspath(__file__), "--child", tmp] + sys.argv[1:]
        subprocess.run(cmd, env=env, check=True)
        _report(args, tmp, perf_data)


if __name__ == "__main__":
    main()
