"""scikit-learn's estimator checks.

The checks feed arbitrary real matrices with several features, so they run
with ``emission="multivariate_gaussian"`` (the 1-D ``"gaussian"`` family
rejects several columns by design, and ``"categorical"`` rejects non-integer
data). With that family every check passes: none needs an exemption.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sk_ihmm import InfiniteHMM


@parametrize_with_checks(
    [InfiniteHMM(emission="multivariate_gaussian", n_samples=2, n_burnin=2, n_chains=1,
                 n_init_particles=5, n_score_particles=5, n_score_samples=1, random_state=0)],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
