import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning


@pytest.fixture
def no_convergence_warnings():
    """Silence ConvergenceWarning: short test fits are not meant to converge."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield
