"""Embed notes (TF-IDF), cluster them (agglomerative, cosine, distance threshold), and the
stability of that clustering under resampling (adjusted Rand index).

scikit-learn is imported lazily: install the ``learn`` extra (``pip install 'mastkit[learn]'``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from mastkit.errors import MastkitError

__all__ = ["Embedding", "cluster_labels", "embed", "pairwise_cosine", "stability"]


def _sklearn() -> Any:
    try:
        import sklearn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MastkitError("taxonomy learning needs scikit-learn: pip install 'mastkit[learn]'") from exc
    return sklearn


class Embedding:
    """TF-IDF vectors of texts, with the fitted vectoriser (to embed more texts in the same space)."""

    def __init__(self, texts: Sequence[str]) -> None:
        _sklearn()
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(
            ngram_range=(1, 2),
            sublinear_tf=True,
            stop_words="english",
            token_pattern=r"(?u)<?\b\w\w+\b>?",
            min_df=1,
        )
        self.matrix: Any = self.vectorizer.fit_transform(list(texts))

    def transform(self, texts: Sequence[str]) -> Any:
        return self.vectorizer.transform(list(texts))

    def terms(self) -> list[str]:
        return [str(t) for t in self.vectorizer.get_feature_names_out()]


def embed(texts: Sequence[str]) -> Embedding:
    """TF-IDF embedding of ``texts`` (word unigrams and bigrams, sublinear tf)."""
    return Embedding(texts)


def pairwise_cosine(a: Any, b: Any | None = None) -> Any:
    """Cosine similarity matrix of the rows of ``a`` (against ``b`` when given)."""
    from sklearn.metrics.pairwise import cosine_similarity

    return cosine_similarity(a, b if b is not None else a)


def cluster_labels(matrix: Any, distance_threshold: float) -> list[int]:
    """Agglomerative clustering (average linkage, cosine distance) cut at ``distance_threshold``."""
    n = matrix.shape[0]
    if n == 0:
        return []
    if n == 1:
        return [0]
    from sklearn.cluster import AgglomerativeClustering

    dense = matrix.toarray() if hasattr(matrix, "toarray") else matrix
    model = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=distance_threshold
    )
    # an all-zero row has no cosine distance; give it a tiny own direction
    import numpy as np

    dense = np.asarray(dense, dtype=float)
    empty = ~dense.any(axis=1)
    if empty.any():
        pad = np.zeros((n, 1))
        pad[empty, 0] = 1.0
        dense = np.hstack([dense, pad])
    return [int(x) for x in model.fit_predict(dense)]


def stability(
    matrix: Any,
    labels: Sequence[int],
    distance_threshold: float,
    *,
    rounds: int = 10,
    fraction: float = 0.8,
    seed: int = 0,
) -> float:
    """Mean adjusted Rand index between ``labels`` and the clustering of random subsamples
    (``fraction`` of the rows, without replacement, so no row is duplicated), over ``rounds``.

    1.0 when every subsample splits its rows as the full clustering does; near 0 for chance."""
    from sklearn.metrics import adjusted_rand_score

    n = matrix.shape[0]
    if n < 4:
        return 1.0
    rng = random.Random(seed)
    size = max(3, int(n * fraction))
    scores = []
    for _ in range(rounds):
        rows = sorted(rng.sample(range(n), size))
        sub = cluster_labels(matrix[rows], distance_threshold)
        scores.append(float(adjusted_rand_score([labels[i] for i in rows], sub)))
    return sum(scores) / len(scores)
