"""Learn a system's own failure taxonomy from its traces (after ATLAS / AdaMAST).

Open coding (:mod:`~mastkit.learn.notes`, or a model in :mod:`~mastkit.learn.llm`) turns each
failed trace into short domain-free notes with evidence; :mod:`~mastkit.learn.cluster` embeds
them (TF-IDF) and clusters them; :mod:`~mastkit.learn.induce` names and defines the clusters
as modes, maps them to MAST and computes the validation gates; :mod:`~mastkit.learn.pipeline`
runs it all with notes persisted so a run resumes; :mod:`~mastkit.learn.export` writes YAML
and the AdaMAST JSON shape.
"""

from mastkit.learn.induce import Gate, LearnOptions, LearnResult, induce_taxonomy
from mastkit.learn.notes import Note, offline_notes
from mastkit.learn.pipeline import learn_taxonomy

__all__ = [
    "Gate",
    "LearnOptions",
    "LearnResult",
    "Note",
    "induce_taxonomy",
    "learn_taxonomy",
    "offline_notes",
]
