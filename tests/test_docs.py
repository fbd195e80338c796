"""The documentation builds without warnings, and the user guide's snippets run.

Both need the docs extra (``pip install ".[docs]"``) and are skipped without
it; CI installs only the test extra. The HTML build here does not execute
the gallery (``plot_gallery=0``): ``tests/test_examples.py`` runs the
examples. Offline, intersphinx references are rendered without links (see
``doc/conf.py``), so the build is also warning-free without the network.
"""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("sphinx_gallery")
pytest.importorskip("matplotlib")

DOC = Path(__file__).resolve().parent.parent / "doc"


def _sphinx(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sphinx", *args], cwd=cwd,
                          capture_output=True, text=True)


def test_html_builds_without_warnings(tmp_path):
    """``sphinx-build -n -W``: every reference resolves, every method renders."""
    out = _sphinx("-q", "-n", "-W", "--keep-going", "-D", "plot_gallery=0",
                  "-d", str(tmp_path / "doctrees"), str(DOC), str(tmp_path / "html"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    html = (tmp_path / "html" / "generated" / "sk_ihmm.InfiniteHMM.html").read_text()
    for method in ("fit", "predict", "predict_proba", "score", "score_sequences", "perplexity",
                   "sample", "diagnostics", "to_arviz", "point_estimate",
                   "posterior_similarity"):
        assert f'id="sk_ihmm.InfiniteHMM.{method}"' in html, method


@pytest.mark.slow
def test_user_guide_snippets_run(tmp_path):
    """Every ``.. testcode::`` block of the guide runs and prints what it shows
    (``sphinx-build -b doctest``; a few minutes: the snippets fit models)."""
    out = _sphinx("-q", "-b", "doctest", "-d", str(tmp_path / "doctrees"), str(DOC),
                  str(tmp_path / "doctest"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
