"""Sphinx configuration for sk_ihmm.

Build the HTML (runs the gallery examples, about a minute and a half)::

    pip install ".[docs]"
    sphinx-build -n -W doc doc/_build/html

Run every snippet of the user guide (``.. testcode::`` blocks)::

    sphinx-build -b doctest doc doc/_build/doctest

Intersphinx links to numpy, scipy, scikit-learn and matplotlib need the
network. Offline (or with ``SK_IHMM_DOCS_OFFLINE=1``) the inventories are
not fetched and references into those projects are rendered as plain code
instead of links, so ``-n -W`` still passes; see :func:`_reachable` below.
"""

import os
import urllib.request

import sk_ihmm

project = "sk_ihmm"
author = "sk_ihmm developers"
copyright = "sk_ihmm developers"
release = sk_ihmm.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "screenshots"]
html_theme = "alabaster"
html_theme_options = {
    "description": "Bayesian nonparametric HMMs with a scikit-learn interface",
    "fixed_sidebar": True,
    "page_width": "1100px",
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}

autosummary_generate = True
autodoc_default_options = {"member-order": "bysource"}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# ``sphinx-build -b doctest``: only the ``.. testcode::`` blocks of the guide
# are run (the docstrings' ``>>>`` examples are run by pytest, not here).
doctest_test_doctest_blocks = ""
doctest_global_setup = """
import matplotlib
matplotlib.use("Agg")
try:
    import dask.distributed
    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False
try:
    import arviz
    HAVE_ARVIZ = True
except ImportError:
    HAVE_ARVIZ = False
"""

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"plot_",
    "backreferences_dir": "generated",
    "doc_module": ("sk_ihmm",),
    "reference_url": {"sk_ihmm": None},
    "min_reported_time": 1,
}

# ---------------------------------------------------------------- intersphinx
_INTERSPHINX = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
    "matplotlib": "https://matplotlib.org/stable/",
    "joblib": "https://joblib.readthedocs.io/en/stable/",
}

#: The top-level Python names documented by each project above.
_EXTERNAL_MODULES = {
    "python": ["pickle", "warnings", "os", "pathlib", "FileNotFoundError", "KeyboardInterrupt",
               "ValueError", "UserWarning", "dict", "list", "tuple", "int", "float", "str",
               "bool"],
    "numpy": ["numpy", "np"],
    "scipy": ["scipy"],
    "sklearn": ["sklearn"],
    "matplotlib": ["matplotlib"],
    "joblib": ["joblib"],
}


def _reachable(url, timeout=5.0):
    """Whether the project's ``objects.inv`` can be fetched."""
    if os.environ.get("SK_IHMM_DOCS_OFFLINE"):
        return False
    try:
        with urllib.request.urlopen(url + "objects.inv", timeout=timeout) as response:
            return response.status == 200
    except Exception:
        return False


intersphinx_mapping = {}
_offline = []
for _name, _url in _INTERSPHINX.items():
    if _reachable(_url):
        intersphinx_mapping[_name] = (_url, None)
    else:
        _offline.append(_name)
if _offline:
    print(f"intersphinx: no inventory for {', '.join(_offline)} (offline?); their references "
          "are rendered as code without links")

#: Prefixes of reference targets that belong to a project whose inventory is
#: missing: such a reference is not an error of these docs.
_UNLINKED = tuple(f"{mod}" for name in _offline for mod in _EXTERNAL_MODULES[name])


def _unlinked_reference(app, env, node, contnode):
    """Render a reference into an unreachable project as plain code."""
    target = node.get("reftarget", "")
    if node.get("refdomain") == "py" and target.split(".")[0] in _UNLINKED:
        return contnode
    return None


def setup(app):
    # after intersphinx (priority 500) had its chance to resolve the reference
    app.connect("missing-reference", _unlinked_reference, priority=900)
