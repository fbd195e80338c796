"""Emission families: collapsed conjugate priors and their numba kernels.

One module per family (:mod:`~sk_ihmm.emissions.categorical`,
:mod:`~sk_ihmm.emissions.gaussian`,
:mod:`~sk_ihmm.emissions.multivariate_gaussian`,
:mod:`~sk_ihmm.emissions.diagonal_gaussian`,
:mod:`~sk_ihmm.emissions.poisson`,
:mod:`~sk_ihmm.emissions.hcrp_categorical`,
:mod:`~sk_ihmm.emissions.autoregressive`) holds its class and its
kernels; ``_registry`` lists the families; ``_dispatch`` holds the kernel
functions the samplers call, each taking the family's tag ``fam`` first and
dispatching on it at compile time. ``_base`` states the contract a family
fulfils (:class:`EmissionFamily`, :class:`Kernels`).

Adding a family is one new module and one line in ``_registry``; see
:doc:`/internals`, "Adding an emission family".
"""

from ._base import (PRIOR_COVARIANCE_FRACTION, PRIOR_MEAN_PRECISION, SHIFTED_FLOOR,
                    EmissionFamily, Kernels, family_tag)
from ._dispatch import (MissingTag, add_labelled, log_emission_matrix, log_marginal_sum,
                        log_pred, log_pred_block, log_prior_predictive, log_proposal_block,
                        missing_aware, move_block, move_stats, param_loglik,
                        resample_hyperparameters, sample_param, shifted_param_loglik_block,
                        update)
from ._registry import FAMILIES, make_emission, register_family
from .autoregressive import AutoRegressive
from .categorical import Categorical
from .diagonal_gaussian import DiagonalGaussian
from .gaussian import PROPOSAL_QUADRATIC_HALF_NU1, Gaussian
from .hcrp_categorical import HCRPCategorical
from .multivariate_gaussian import MultivariateGaussian
from .poisson import Poisson

__all__ = [
    "EmissionFamily",
    "Kernels",
    "family_tag",
    "register_family",
    "FAMILIES",
    "Categorical",
    "Gaussian",
    "MultivariateGaussian",
    "DiagonalGaussian",
    "Poisson",
    "HCRPCategorical",
    "AutoRegressive",
    "make_emission",
]
