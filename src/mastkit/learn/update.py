"""Refine an existing taxonomy with a newly learned one, keeping mode codes stable.

A new mode that matches an old one (TF-IDF cosine of their texts at or above a threshold)
takes the old code; when several old modes match the same new mode, they have merged: the
new mode keeps the most similar old code and lists the others as aliases. A new mode with no
match gets the next free code. Old modes with no match stay as they were (marked unseen).
"""

from __future__ import annotations

import re

from mastkit.learn.cluster import embed, pairwise_cosine
from mastkit.taxonomy import Category, FailureMode, Taxonomy

__all__ = ["update_taxonomy"]


def _text(m: FailureMode) -> str:
    return " ".join([m.name, m.definition, m.when_to_use, *m.cues])


def update_taxonomy(
    old: Taxonomy, new: Taxonomy, *, min_similarity: float = 0.5, prefix: str = "L"
) -> Taxonomy:
    """``new``'s modes under ``old``'s codes where they match, new codes elsewhere."""
    emb = embed([_text(m) for m in old.modes] + [_text(m) for m in new.modes])
    sims = pairwise_cosine(emb.matrix[len(old.modes) :], emb.matrix[: len(old.modes)])
    matched: dict[int, list[tuple[float, int]]] = {}
    for j in range(len(old.modes)):
        col = [float(sims[i][j]) for i in range(len(new.modes))]
        if not col:
            continue
        i = max(range(len(col)), key=col.__getitem__)
        if col[i] >= min_similarity:
            matched.setdefault(i, []).append((col[i], j))
    numbers = [
        int(hit.group(1)) for c in old.codes if (hit := re.fullmatch(rf"{re.escape(prefix)}-(\d+)", c))
    ]
    next_no = max(numbers, default=0) + 1
    modes: list[FailureMode] = []
    used_old: set[int] = set()
    for i, m in enumerate(new.modes):
        hits = sorted(matched.get(i, []), reverse=True)
        if hits:
            keep = old.modes[hits[0][1]]
            merged = [old.modes[j].code for _s, j in hits[1:]]
            used_old.update(j for _s, j in hits)
            aliases = list(
                dict.fromkeys(
                    [*keep.aliases, *merged, *(a for _s, j in hits[1:] for a in old.modes[j].aliases)]
                )
            )
            modes.append(m.model_copy(update={"code": keep.code, "aliases": aliases,
                                              "extra": {**m.extra, "update": "kept", "similarity": round(hits[0][0], 3)}}))  # fmt: skip
        else:
            modes.append(
                m.model_copy(
                    update={"code": f"{prefix}-{next_no:02d}", "extra": {**m.extra, "update": "new"}}
                )
            )
            next_no += 1
    for j, m in enumerate(old.modes):
        if j not in used_old:
            modes.append(m.model_copy(update={"extra": {**m.extra, "update": "unseen"}}))
    cats = {c.code: c for c in [*old.categories, *new.categories]}
    used = list(dict.fromkeys(m.category for m in modes))
    version = str(int(old.version) + 1) if old.version.isdigit() else f"{old.version}+1"
    return Taxonomy(
        id=old.id,
        name=old.name,
        version=version,
        source=old.source,
        description=new.description,
        categories=[cats.get(c, Category(code=c, name=c)) for c in used],
        modes=modes,
        extra={**old.extra, **new.extra, "updated_from_version": old.version},
    )
