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
    "plot_sequence1_split_merge.py": {"N_RUNS = 6": "N_RUNS = 2",
                                      "BUDGET = 1.5": "BUDGET = 0.05"},
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
