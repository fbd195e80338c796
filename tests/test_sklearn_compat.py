"""scikit-learn's estimator checks on ``InfiniteHMM()`` with every argument at its default.

The default ``emission="gaussian"`` takes any number of columns (one column:
:class:`~sk_ihmm.emissions.Gaussian`; several: the full-covariance
:class:`~sk_ihmm.emissions.MultivariateGaussian`), so the checks' arbitrary
real matrices are valid input. The expected failures below are properties of
every hidden Markov model, declared through scikit-learn's own mechanism.
"""

import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from sk_ihmm import InfiniteHMM

#: Checks a sequence model fails by design, with the reason.
EXPECTED_FAILED_CHECKS = {
    "check_methods_sample_order_invariance": (
        "The rows of X are the time steps of a sequence: the state posterior of a step depends "
        "on its neighbours, so predict_proba/predict change when the rows are shuffled."
    ),
    "check_methods_subset_invariance": (
        "The rows of X are the time steps of a sequence: predicting on a subset of the steps "
        "removes their neighbours, which changes the state posterior of the remaining steps."
    ),
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks([InfiniteHMM()], expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    # the checks' small random matrices need not converge; the warning is
    # tested in test_convergence.py
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
