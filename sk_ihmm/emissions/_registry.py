"""The registry of emission families: ``emission=`` names and kernel tags.

A family is usable by every sampler once :func:`register_family` has seen
its class; the built-in families are registered below, one line each.
"""

from ._base import EmissionFamily, Kernels
from .autoregressive import AutoRegressive
from .categorical import Categorical
from .diagonal_gaussian import DiagonalGaussian
from .gaussian import Gaussian
from .hcrp_categorical import HCRPCategorical
from .multivariate_gaussian import MultivariateGaussian
from .poisson import Poisson

__all__ = ["FAMILIES", "register_family", "make_emission", "kernels_for_tag"]

#: ``emission=`` name -> family class
FAMILIES = {}
_KERNELS = {}  # tag class -> Kernels


def register_family(cls):
    """Register an :class:`~sk_ihmm.emissions.EmissionFamily` subclass.

    Its ``name`` becomes a valid ``emission=`` string and its tag a valid
    ``fam`` for the kernels. Returns ``cls``, so it can decorate the class.
    """
    if not (isinstance(cls, type) and issubclass(cls, EmissionFamily)):
        raise TypeError(f"register_family expects an EmissionFamily subclass, got {cls!r}.")
    if not cls.name:
        raise ValueError(f"{cls.__name__}.name must be a non-empty string.")
    if not isinstance(cls.kernels, Kernels):
        raise TypeError(f"{cls.__name__}.kernels must be an sk_ihmm.emissions.Kernels.")
    tag_cls = type(cls.tag)
    if not (issubclass(tag_cls, tuple) and hasattr(tag_cls, "_fields")):
        raise TypeError(f"{cls.__name__}.tag must be an instance of a family_tag() class.")
    taken = FAMILIES.get(cls.name)
    if taken is not None and taken is not cls:
        raise ValueError(f"The emission name {cls.name!r} is taken by {taken.__name__}.")
    FAMILIES[cls.name] = cls
    _KERNELS[tag_cls] = cls.kernels
    return cls


def kernels_for_tag(tag_cls):
    """The :class:`Kernels` of the family whose tag class is ``tag_cls``, or None."""
    return _KERNELS.get(tag_cls)


def make_emission(emission, n_features=None, covariance_type="full"):
    """Return an emission family instance from a string or an instance.

    The string ``"gaussian"`` names the Gaussian family for any number of
    columns. With ``covariance_type="full"`` (the default) that is
    :class:`Gaussian` for one column (``n_features`` 1 or ``None``) and
    :class:`MultivariateGaussian` (full covariance) for several; with
    ``"diag"`` it is :class:`DiagonalGaussian` for any number. Any other
    emission takes ``"full"`` only, except a :class:`DiagonalGaussian`
    (instance or name), which ``"diag"`` describes too.
    """
    if covariance_type not in ("full", "diag"):
        raise ValueError(f"covariance_type must be 'full' or 'diag'; got {covariance_type!r}.")
    if isinstance(emission, EmissionFamily):
        if kernels_for_tag(type(emission.tag)) is None:
            raise ValueError(
                f"The emission family {type(emission).__name__} is not registered; call "
                "sk_ihmm.emissions.register_family on its class."
            )
        family = emission
    elif isinstance(emission, str) and emission == "gaussian":
        if covariance_type == "diag":
            return DiagonalGaussian()
        return MultivariateGaussian() if n_features is not None and n_features > 1 else Gaussian()
    elif isinstance(emission, str) and emission in FAMILIES:
        family = FAMILIES[emission]()
    else:
        raise ValueError(
            f"Unknown emission {emission!r}; expected one of {sorted(FAMILIES)} or an "
            "EmissionFamily instance."
        )
    if covariance_type == "diag" and not isinstance(family, DiagonalGaussian):
        shown = repr(emission) if isinstance(emission, str) else f"{type(emission).__name__}(...)"
        raise ValueError(
            f"covariance_type='diag' applies to emission='gaussian' only; got emission="
            f"{shown}. Leave covariance_type at 'full' with another emission (the family "
            "sets its own covariance), or use emission='gaussian'."
        )
    return family


for _family in (
    Categorical,
    Gaussian,
    MultivariateGaussian,
    DiagonalGaussian,
    Poisson,
    HCRPCategorical,
    AutoRegressive,
):
    register_family(_family)
