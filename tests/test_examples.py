"""The gallery examples run (the Sphinx build executes them; nothing else does).

Each ``examples/plot_*.py`` is executed as a script, with the CPU budgets of
the slow ones cut so that it takes seconds. With matplotlib installed the
plots are drawn on the Agg backend; without it (the test extras do not
install it) ``matplotlib.pyplot`` is replaced by a stub whose ``subplots``
returns mock axes, so the computing part of every example still runs.
"""

import sys
from pathlib import Path
from unittest import mock

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: Source replacements that shrink an example's budget (each must match).
QUICK = {
    "plot_alice_chars.py": {"MAX_TIME = 30": "MAX_TIME = 0", "N_TEST = 4000": "N_TEST = 300"},
    "plot_convergence.py": {"MAX_TIME = 30": "MAX_TIME = 0"},
    "plot_ion_channel.py": {"MAX_TIME = 20": "MAX_TIME = 0", "N = 2000": "N = 400"},
    "plot_old_faithful.py": {"MAX_TIME = 15": "MAX_TIME = 0"},
    "plot_quickstart.py": {"MAX_TIME = 60": "MAX_TIME = 0"},
    "plot_sequence1_split_merge.py": {"N_CHAINS = 6": "N_CHAINS = 2",
                                      "N_SWEEPS = 600": "N_SWEEPS = 30"},
    "plot_sticky.py": {"MAX_TIME = 15": "MAX_TIME = 0", "N_TRAIN = 2000": "N_TRAIN = 400"},
    "plot_switching_dynamics.py": {"MAX_TIME = 15": "MAX_TIME = 0", "N_TRAIN = 1500": "N_TRAIN = 400"},
    "plot_well_log.py": {"MAX_TIME = 30": "MAX_TIME = 0"},
}


def _stub_pyplot():
    def subplots(nrows=1, ncols=1, **kwargs):
        n = nrows * ncols
        axes = mock.MagicMock() if n == 1 else [mock.MagicMock() for _ in range(n)]
        return mock.MagicMock(), axes

    plt = mock.MagicMock()
    plt.subplots = subplots
    return plt


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("plot_*.py")))
def test_example_runs(name, monkeypatch, capsys):
    path = EXAMPLES / name
    src = path.read_text()
    for old, new in QUICK.get(name, {}).items():
        assert old in src, f"{name} no longer contains {old!r}: update QUICK"
        src = src.replace(old, new)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = _stub_pyplot()
        monkeypatch.setitem(sys.modules, "matplotlib", mock.MagicMock(pyplot=plt))
        monkeypatch.setitem(sys.modules, "matplotlib.pyplot", plt)
    exec(compile(src, str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})
    if not isinstance(plt, mock.MagicMock):
        plt.close("all")
    assert capsys.readouterr().out    # every example prints its results
