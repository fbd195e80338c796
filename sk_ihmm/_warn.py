"""Warnings that point at the user's line, not at the library's.

``warnings.warn(..., stacklevel=n)`` needs the number of frames between the
call and the user's code, which differs between ``model.fit(X)``, a
``Pipeline``, ``GridSearchCV`` and scikit-learn's ``_fit_context`` wrapper
around ``fit``. :func:`warn` counts them instead: it attributes the warning
to the first frame outside this package, scikit-learn and joblib (as
pandas' ``find_stack_level`` does), so that the file and line a warning
shows are the ones that called into the library. In a worker thread (a
parallel grid search) no user frame is on the stack, and the first frame
outside the libraries is the standard library's thread pool; the warning
then points at the first frame outside this package (scikit-learn's call).
"""

import os
import sys
import sysconfig
import warnings

__all__ = ["warn"]


def _library_dirs():
    import joblib
    import sklearn

    return tuple(os.path.dirname(m.__file__) + os.sep
                 for m in (sys.modules[__package__], sklearn, joblib))


def _in_stdlib(filename):
    stdlib = sysconfig.get_paths()["stdlib"] + os.sep
    return filename.startswith(stdlib) and "-packages" + os.sep not in filename


def user_stacklevel():
    """The ``stacklevel`` that makes a warning issued by this function's
    caller point at the first frame outside the libraries, or, when that
    frame is the standard library's (a worker thread), at the first frame
    outside this package (1: the caller itself, when there is none)."""
    dirs = _library_dirs()
    own = dirs[0]
    frame = sys._getframe(1)     # the caller of user_stacklevel, level 1 to warnings.warn
    level, outside_own = 1, None
    while frame is not None:
        filename = frame.f_code.co_filename
        if outside_own is None and not filename.startswith(own):
            outside_own = level
        if not filename.startswith(dirs):
            break
        frame = frame.f_back
        level += 1
    if frame is not None and not _in_stdlib(frame.f_code.co_filename):
        return level
    return outside_own or 1


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the user's line."""
    warnings.warn(message, category, stacklevel=user_stacklevel())
