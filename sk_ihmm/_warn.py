"""Warnings that point at the user's line, not at the library's.

``warnings.warn(..., stacklevel=n)`` needs the number of frames between the
call and the user's code, which differs between ``model.fit(X)``, a
``Pipeline``, ``GridSearchCV`` and scikit-learn's ``_fit_context`` wrapper
around ``fit``. :func:`warn` counts them instead: it attributes the warning
to the first frame outside this package, scikit-learn and joblib (as
pandas' ``find_stack_level`` does), so that the file and line a warning
shows are the ones that called into the library.
"""

import os
import sys
import warnings

__all__ = ["warn"]


def _library_dirs():
    import joblib
    import sklearn

    return tuple(os.path.dirname(m.__file__) + os.sep
                 for m in (sys.modules[__package__], sklearn, joblib))


def user_stacklevel():
    """The ``stacklevel`` that makes a warning issued by this function's
    caller point at the first frame outside the library (1: the caller
    itself, when nothing calls it from outside)."""
    dirs = _library_dirs()
    frame = sys._getframe(1)     # the caller of user_stacklevel, level 1 to warnings.warn
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(dirs):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the user's line."""
    warnings.warn(message, category, stacklevel=user_stacklevel())
