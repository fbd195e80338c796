"""
Characters of *Alice in Wonderland*: held-out perplexity
========================================================

The character-level set-up of the iHMM papers: the first 1,000 characters of
*Alice's Adventures in Wonderland* (Project Gutenberg eBook #11, public
domain) for training and the next 4,000 for testing, lower-cased and mapped
onto 31 symbols (26 letters, space and four punctuation classes) by
:func:`sk_ihmm.datasets.load_alice_chars`. The text is read from the data
folder (set ``SK_IHMM_DATA`` to the folder holding
``alice_in_wonderland.txt``); the script says so and stops if it is missing.

Hidden states of a character HMM are classes of characters that behave
alike in sequence (vowels, consonants, spaces ...). We compare the held-out
perplexity (:doc:`/evaluation`) with two baselines without hidden states.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

from sk_ihmm import InfiniteHMM
from sk_ihmm.datasets import DataNotAvailable, load_alice_chars

N_TRAIN = 1000
N_TEST = 4000
MAX_TIME = 30       # seconds

try:
    X_train, X_test, alphabet = load_alice_chars(N_TRAIN, N_TEST)
except DataNotAvailable as exc:
    print(f"Skipping this example: {exc}")
    X_train = None

# %%
# Fit with categorical emissions. The alphabet is fixed to all 31 symbols
# (``n_symbols``), since the test text may hold a symbol the training text
# does not.
if X_train is not None:
    text = "".join(alphabet[c] for c in X_train[:80, 0])
    print(f"training text starts: {text!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # convergence is printed below
        model = InfiniteHMM(emission="categorical", max_time=MAX_TIME, random_state=0)
        model.set_params(emission__n_symbols=len(alphabet))
        model.fit(X_train)
    p = model.n_states_posterior_
    print(f"converged: {model.convergence_['converged']}; most probable numbers of states:",
          {int(k): round(float(p[k]), 2) for k in np.argsort(p)[::-1][:3]})

    perplexity = model.perplexity(X_test)
    counts = np.bincount(X_train.ravel(), minlength=len(alphabet)) + 0.5
    unigram = np.exp(-np.mean(np.log(counts / counts.sum())[X_test.ravel()]))
    print(f"held-out perplexity: iHMM {perplexity:.2f}, unigram {unigram:.2f}, "
          f"uniform {len(alphabet)}")

# %%
# The infinite HMM predicts the next character far better than character
# frequencies alone. Which characters does each state emit? The three most
# probable symbols of each state of the representative sample:
if X_train is not None:
    for k, row in enumerate(model.emissionprob_):
        top = np.argsort(row)[::-1][:3]
        print(f"state {k:2d}: " + "  ".join(f"{alphabet[c]!r} {row[c]:.2f}" for c in top))

    fig, ax = plt.subplots(figsize=(9, 4))
    ax.imshow(model.emissionprob_, aspect="auto", cmap="Blues")
    ax.set_xticks(range(len(alphabet)), [repr(a)[1:-1] or " " for a in alphabet])
    ax.set(xlabel="symbol", ylabel="state", title="emission probabilities")
    plt.show()
