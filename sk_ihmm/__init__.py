"""sk_ihmm: Bayesian nonparametric hidden Markov models with a scikit-learn interface."""

from ._estimator import InfiniteHMM
from .emissions import (AutoRegressive, Categorical, DiagonalGaussian, Gaussian, HCRPCategorical,
                        MultivariateGaussian, Poisson)

__all__ = [
    "InfiniteHMM", "Categorical", "HCRPCategorical", "Gaussian", "MultivariateGaussian",
    "DiagonalGaussian", "Poisson", "AutoRegressive",
]
__version__ = "0.1.0"
