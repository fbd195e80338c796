"""Synthetic generators and loaders for the benchmark data sets.

Two kinds of data are provided:

* **Synthetic sequences**, generated on the fly and reproducible through
  ``random_state``: :func:`make_gaussian_hmm` (the Gaussian HMM of the PGAS
  iHMM paper) and :func:`make_sequence1` (the deterministic cyclic symbol
  sequence of Makino et al.).
* **Real data sets**, which are *not* shipped with the package. They live in a
  shared folder outside the repository and are located by
  :func:`shared_data_path`; every loader raises :class:`DataNotAvailable`
  (a :class:`FileNotFoundError`) when its file cannot be found, so test suites
  and benchmarks can skip cleanly, e.g.::

      try:
          X = load_well_log()
      except DataNotAvailable as exc:
          pytest.skip(str(exc))

All functions return observations shaped ``(n_timesteps, 1)``, the layout used
by the estimators (and by hmmlearn): one row per time step, one column per
feature. Categorical symbols are integer codes.

References
----------
.. [1] N. Tripuraneni, S. Gu, H. Ge and Z. Ghahramani, "Particle Gibbs for
   infinite hidden Markov models", NeurIPS 2015.
.. [2] T. Makino, S. Takei, I. Sato and D. Mochihashi, "Restricted collapsed
   draw: accurate sampling for hierarchical Chinese restaurant process hidden
   Markov models", arXiv:1106.0474, 2011.
.. [3] J. Van Gael, Y. Saatci, Y. W. Teh and Z. Ghahramani, "Beam sampling for
   the infinite hidden Markov model", ICML 2008.
"""

import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "DataNotAvailable",
    "CHAR_ALPHABET",
    "ION_CHANNEL_NAMES",
    "make_gaussian_hmm",
    "make_sequence1",
    "shared_data_path",
    "load_alice_chars",
    "load_alice_words",
    "load_well_log",
    "load_ion_channel",
]

#: Environment variable naming a folder that holds the shared data files.
DATA_ENV_VAR = "SK_IHMM_DATA"

#: Symbols of :func:`load_alice_chars`; the code of a symbol is its index.
CHAR_ALPHABET = [*"abcdefghijklmnopqrstuvwxyz", " ", ".", ",", "'", "-"]

#: Recordings accepted by :func:`load_ion_channel`.
ION_CHANNEL_NAMES = (
    "sctrace_test2_sub100",
    "sctrace_cluster_10kHz",
    "ip3r2_icmcstat",
)

_ALICE_FILE = "alice_in_wonderland.txt"
_SEQUENCE1_PATTERN = np.array([0, 1, 2, 3, 1, 2, 3, 4])  # A B C D B C D E
_PGAS_MEANS = {
    4: (-2.0, -0.5, 1.0, 4.0),
    10: tuple(float(m) for m in range(-9, 10, 2)),
}
# Punctuation classes of the character alphabet; other non-letters are dropped.
_CHAR_CLASSES = str.maketrans({
    "!": ".", "?": ".",
    ";": ",", ":": ",",
    '"': "'",
})
_CHAPTER_HEADING = re.compile(r"^CHAPTER [IVXLC]+\.")


class DataNotAvailable(FileNotFoundError):
    """A shared data file could not be found.

    Raised by :func:`shared_data_path` and by every ``load_*`` function. It
    subclasses :class:`FileNotFoundError`, so callers that do not know about
    it still see a familiar exception; test suites catch it to skip.
    """


# --------------------------------------------------------------------------
# Synthetic data
# --------------------------------------------------------------------------
def make_gaussian_hmm(n_timesteps=4000, n_states=4, random_state=None,
                      self_transition=0.75, sd=0.5, means=None):
    """Sample the synthetic Gaussian HMM of the PGAS iHMM paper.

    The hidden chain starts in a uniformly drawn state. At each step it stays
    in its current state with probability ``self_transition`` and otherwise
    moves to one of the other ``n_states - 1`` states chosen uniformly, i.e.
    the transition matrix has ``self_transition`` on the diagonal and
    ``(1 - self_transition) / (n_states - 1)`` everywhere else. Each
    observation is the mean of the current state plus Gaussian noise with
    standard deviation ``sd``. With the defaults this is the 4-state data set
    of Tripuraneni et al. (2015) [1]_.

    Parameters
    ----------
    n_timesteps : int, default=4000
        Length of the sequence.
    n_states : int, default=4
        Number of hidden states.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, as accepted by
        :func:`sklearn.utils.check_random_state`.
    self_transition : float, default=0.75
        Probability of staying in the current state, in ``[0, 1]``.
    sd : float, default=0.5
        Standard deviation of the Gaussian emission noise.
    means : array-like of shape (n_states,), default=None
        State means. By default the paper's values are used:
        ``(-2, -0.5, 1, 4)`` for 4 states and ``(-9, -7, ..., 7, 9)`` for
        10 states. For any other number of states the means are evenly spaced
        with spacing 2 and centred at 0, ``2 * (k - (n_states - 1) / 2)``.

    Returns
    -------
    X : ndarray of shape (n_timesteps, 1), dtype float64
        Observations.
    states : ndarray of shape (n_timesteps,), dtype int64
        True hidden states, coded ``0 .. n_states - 1`` in the order of
        ``means``.

    References
    ----------
    .. [1] N. Tripuraneni, S. Gu, H. Ge and Z. Ghahramani, "Particle Gibbs
       for infinite hidden Markov models", NeurIPS 2015, Section 5.

    Examples
    --------
    >>> X, states = make_gaussian_hmm(1000, random_state=0)
    >>> X.shape, states.shape
    ((1000, 1), (1000,))
    """
    n_timesteps = _check_positive_int(n_timesteps, "n_timesteps")
    n_states = _check_positive_int(n_states, "n_states")
    if not 0.0 <= self_transition <= 1.0:
        raise ValueError(
            f"self_transition must be in [0, 1], got {self_transition!r}.")
    if not sd > 0:
        raise ValueError(f"sd must be positive, got {sd!r}.")
    if means is None:
        means = _PGAS_MEANS.get(
            n_states, 2.0 * (np.arange(n_states) - (n_states - 1) / 2.0))
    means = np.asarray(means, dtype=float)
    if means.shape != (n_states,):
        raise ValueError(
            f"means must have shape ({n_states},), got {means.shape}.")

    rng = check_random_state(random_state)
    first = rng.randint(n_states)
    if n_states == 1:
        increments = np.zeros(n_timesteps - 1, dtype=np.int64)
    else:
        # Moving by an offset drawn uniformly from 1 .. K-1 (mod K) is a move
        # to a uniformly chosen *other* state, so the chain is a cumulative
        # sum of increments taken modulo K.
        stay = rng.random_sample(n_timesteps - 1) < self_transition
        offsets = rng.randint(1, n_states, size=n_timesteps - 1)
        increments = np.where(stay, 0, offsets)
    states = np.empty(n_timesteps, dtype=np.int64)
    states[0] = first
    states[1:] = first + np.cumsum(increments)
    states %= n_states
    X = means[states] + sd * rng.standard_normal(n_timesteps)
    return X.reshape(-1, 1), states


def make_sequence1(n_timesteps=500):
    """Deterministic cyclic symbol sequence ("Sequence 1" of Makino et al.).

    The symbol string ``A B C D B C D E`` is repeated, with symbols coded
    ``A=0, B=1, C=2, D=3, E=4``. The symbols alone are not Markov (``B``,
    ``C`` and ``D`` occur at two places of the cycle), but an HMM with 8
    states, one per position of the length-8 cycle, predicts the sequence
    perfectly. The true hidden state is that position, ``t mod 8``.

    Parameters
    ----------
    n_timesteps : int, default=500
        Length of the sequence.

    Returns
    -------
    X : ndarray of shape (n_timesteps, 1), dtype int64
        Symbol codes in ``0 .. 4``.
    states : ndarray of shape (n_timesteps,), dtype int64
        Position in the cycle, in ``0 .. 7``.

    References
    ----------
    .. [1] T. Makino, S. Takei, I. Sato and D. Mochihashi, "Restricted
       collapsed draw: accurate sampling for hierarchical Chinese restaurant
       process hidden Markov models", arXiv:1106.0474, 2011.

    Examples
    --------
    >>> X, states = make_sequence1(10)
    >>> X.ravel().tolist()
    [0, 1, 2, 3, 1, 2, 3, 4, 0, 1]
    """
    n_timesteps = _check_positive_int(n_timesteps, "n_timesteps")
    states = np.arange(n_timesteps, dtype=np.int64) % len(_SEQUENCE1_PATTERN)
    X = _SEQUENCE1_PATTERN[states].astype(np.int64)
    return X.reshape(-1, 1), states


# --------------------------------------------------------------------------
# Real data (kept outside the package)
# --------------------------------------------------------------------------
def shared_data_path(name):
    """Locate a file of the shared (external) data folder.

    The candidate folders are tried in order:

    1. the folder named by the environment variable ``SK_IHMM_DATA``, if set;
    2. ``<repository root>/../shared/data``, where the repository root is the
       parent folder of the ``sk_ihmm`` package.

    The data files are never copied into the project.

    Parameters
    ----------
    name : str or path-like
        File name relative to the data folder, e.g. ``"well_log.txt"`` or
        ``"mocap6/metadata_per_seq.csv"``.

    Returns
    -------
    path : pathlib.Path
        Absolute path of the first existing candidate.

    Raises
    ------
    DataNotAvailable
        If the file exists in none of the candidate folders.
    """
    folders = []
    env_folder = os.environ.get(DATA_ENV_VAR)
    if env_folder:
        folders.append(Path(env_folder).expanduser())
    repo_root = Path(__file__).resolve().parent.parent
    folders.append(repo_root.parent / "shared" / "data")
    for folder in folders:
        path = folder / name
        if path.is_file():
            return path.resolve()
    searched = ", ".join(str(folder) for folder in folders)
    raise DataNotAvailable(
        f"Data file {str(name)!r} not found; searched: {searched}. Set the "
        f"environment variable {DATA_ENV_VAR} to the folder that holds it.")


def load_alice_chars(n_train=1000, n_test=4000):
    """Characters of *Alice's Adventures in Wonderland* as integer symbols.

    The text starts at the line ``CHAPTER I.`` (the Project Gutenberg header
    is skipped) and ends before the closing ``THE END`` line. It is
    lower-cased and mapped onto the 31 symbols of :data:`CHAR_ALPHABET`:

    * codes 0-25: the letters ``a``-``z``;
    * code 26: a space, standing for any run of whitespace (line breaks
      included);
    * code 27 ``"."``: sentence ends ``.``, ``!`` and ``?``;
    * code 28 ``","``: pauses ``,``, ``;`` and ``:``;
    * code 29 ``"'"``: quotation marks ``'`` and ``"``;
    * code 30 ``"-"``: a hyphen, or a dash ``--`` (a run of hyphens is one
      symbol).

    Every other character (brackets, ``*``, ``_``) is dropped. The first
    ``n_train`` symbols form the training sequence and the next ``n_test``
    symbols the test sequence; with the defaults both lie in chapter I.

    Parameters
    ----------
    n_train : int, default=1000
        Length of the training sequence.
    n_test : int, default=4000
        Length of the test sequence, which directly follows the training one.

    Returns
    -------
    X_train : ndarray of shape (n_train, 1), dtype int64
        Training symbol codes.
    X_test : ndarray of shape (n_test, 1), dtype int64
        Test symbol codes.
    alphabet : list of str
        The symbol of each code (a copy of :data:`CHAR_ALPHABET`).

    Raises
    ------
    DataNotAvailable
        If ``alice_in_wonderland.txt`` is not in the shared data folder.
    ValueError
        If the book is shorter than ``n_train + n_test`` symbols.
    """
    n_train = _check_positive_int(n_train, "n_train")
    n_test = _check_positive_int(n_test, "n_test", allow_zero=True)
    text = "\n".join(_alice_body_lines()).lower().translate(_CHAR_CLASSES)
    code = {symbol: i for i, symbol in enumerate(CHAR_ALPHABET)}
    text = "".join(ch for ch in text if ch in code or ch.isspace())
    text = re.sub(r"-+", "-", text)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) < n_train + n_test:
        raise ValueError(
            f"The text has {len(text)} symbols; n_train + n_test = "
            f"{n_train + n_test} is too many.")
    codes = np.fromiter((code[ch] for ch in text[:n_train + n_test]),
                        dtype=np.int64, count=n_train + n_test)
    codes = codes.reshape(-1, 1)
    return codes[:n_train], codes[n_train:], list(CHAR_ALPHABET)


def load_alice_words(n_test=1000):
    """Words of *Alice's Adventures in Wonderland* as integer symbols.

    The word-level set-up of the iHMM papers: the whole book, from the line
    ``CHAPTER I.`` up to the ``THE END`` line, with

    * chapter heading lines (``CHAPTER II. The Pool of Tears`` ...) dropped;
    * the text split into sentences at every run of ``.``, ``!`` or ``?``,
      and the token ``"EOS"`` appended after each non-empty sentence;
    * text lower-cased and punctuation removed: apostrophes are deleted
      (``didn't`` becomes ``didnt``) and every other non-alphanumeric
      character separates words (``rabbit-hole`` gives ``rabbit``, ``hole``);
    * every word that occurs only once in the whole book replaced by
      ``"UNK"``.

    The last ``n_test`` tokens are held out as the test sequence. The result
    has about 28,250 tokens (about 26,600 words and 1,630 sentences) and a
    vocabulary of about 1,490 types; the papers report 27,120 training plus
    1,000 test words, so their tokenisation differed slightly.

    Parameters
    ----------
    n_test : int, default=1000
        Number of final tokens held out for testing.

    Returns
    -------
    X_train : ndarray of shape (n_tokens - n_test, 1), dtype int64
        Training token codes.
    X_test : ndarray of shape (n_test, 1), dtype int64
        Test token codes.
    vocabulary : list of str
        The token of each code, sorted by decreasing corpus frequency (ties
        alphabetically); it contains ``"EOS"`` and ``"UNK"``.

    Raises
    ------
    DataNotAvailable
        If ``alice_in_wonderland.txt`` is not in the shared data folder.
    ValueError
        If ``n_test`` is not smaller than the number of tokens.
    """
    n_test = _check_positive_int(n_test, "n_test", allow_zero=True)
    lines = [line for line in _alice_body_lines()
             if not _CHAPTER_HEADING.match(line)]
    text = "\n".join(lines).lower()
    tokens = []
    for sentence in re.split(r"[.!?]+", text):
        words = re.findall(r"[a-z0-9]+", sentence.replace("'", ""))
        if words:
            tokens.extend(words)
            tokens.append("EOS")
    counts = Counter(tokens)
    tokens = ["UNK" if counts[token] == 1 else token for token in tokens]
    counts = Counter(tokens)
    if n_test >= len(tokens):
        raise ValueError(
            f"n_test={n_test} must be smaller than the number of tokens "
            f"({len(tokens)}).")
    vocabulary = sorted(counts, key=lambda token: (-counts[token], token))
    code = {token: i for i, token in enumerate(vocabulary)}
    codes = np.array([code[token] for token in tokens], dtype=np.int64)
    codes = codes.reshape(-1, 1)
    split = len(tokens) - n_test
    return codes[:split], codes[split:], vocabulary


def load_well_log():
    """The well-log data (nuclear magnetic response down a bore-hole).

    The classic change-point series of O Ruanaidh & Fitzgerald (1996), used by
    Fearnhead & Clifford (2003) and many HDP-HMM papers: 4,050 raw instrument
    readings (arbitrary units, range about 64,000-140,000) with well-known
    outliers. Values are returned unscaled.

    Returns
    -------
    X : ndarray of shape (4050, 1), dtype float64
        The series.

    Raises
    ------
    DataNotAvailable
        If ``well_log.txt`` is not in the shared data folder.
    """
    return _load_column(shared_data_path("well_log.txt"))


def load_ion_channel(name="sctrace_test2_sub100", n=2000):
    """A single-channel patch-clamp current recording (in pA).

    Parameters
    ----------
    name : {"sctrace_test2_sub100", "sctrace_cluster_10kHz", \
"ip3r2_icmcstat"}, default="sctrace_test2_sub100"
        Which recording, the file ``ion_channel_<name>.txt`` of the shared
        data folder:

        * ``"sctrace_test2_sub100"``: DC-Progs sample ``test2.abf`` (66.7 kHz)
          keeping every 100th sample, as in the PGAS iHMM paper, 14,800
          values; closed level about -1.2 pA, open level about +1.6 pA. The
          first 2,000 values match the length used in that paper.
        * ``"sctrace_cluster_10kHz"``: DC-Progs sample ``cluster.abf`` at
          10 kHz, 11,695 values; closed about -1.2 pA, open about +4.5 pA.
        * ``"ip3r2_icmcstat"``: type-2 IP3 receptor recording of Wagner & Yule
          (2012), 60,000 values; mostly closed (about 0 pA) with rare large
          openings.
    n : int or None, default=2000
        Number of leading values returned; ``None`` returns the whole
        recording.

    Returns
    -------
    X : ndarray of shape (n, 1), dtype float64
        Current in pA.

    Raises
    ------
    DataNotAvailable
        If the file is not in the shared data folder.
    ValueError
        If ``name`` is unknown or ``n`` exceeds the recording's length.
    """
    if name not in ION_CHANNEL_NAMES:
        raise ValueError(
            f"Unknown ion-channel recording {name!r}; expected one of "
            f"{ION_CHANNEL_NAMES}.")
    X = _load_column(shared_data_path(f"ion_channel_{name}.txt"))
    if n is None:
        return X
    n = _check_positive_int(n, "n")
    if n > len(X):
        raise ValueError(
            f"n={n} exceeds the length of recording {name!r} ({len(X)}).")
    return X[:n].copy()


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def _check_positive_int(value, name, allow_zero=False):
    """Validate a positive (or non-negative) integer argument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value!r}.")
    return int(value)


def _alice_body_lines():
    """Lines of the book from ``CHAPTER I.`` up to (excluding) ``THE END``."""
    path = shared_data_path(_ALICE_FILE)
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    try:
        start = next(i for i, line in enumerate(lines)
                     if line.startswith("CHAPTER I."))
        stop = next(i for i in range(start, len(lines))
                    if lines[i].strip() == "THE END")
    except StopIteration:
        raise ValueError(
            f"{path} does not contain the expected 'CHAPTER I.' and "
            "'THE END' lines.") from None
    return lines[start:stop]


def _load_column(path):
    """Read a one-value-per-line text file into a ``(n, 1)`` float array."""
    return np.loadtxt(path, dtype=np.float64, ndmin=1).reshape(-1, 1)
