"""A labelled corpus for measuring mastkit's rule detectors (issue 19).

Three sources, every trace labelled for all 14 MAST modes (present, absent, or skipped when a
mode cannot be judged):

* ``generator``: seeded synthetic traces with injected failures in several styles;
* ``sim_source``: the guard simulator's scripted runs (``mastkit.guard.sim``);
* ``real``: traces from ``../shared/data`` labelled by hand (``real_labels.jsonl``) plus the
  MAST human-labelled file, whose own labels are used as they are.

``bench/detectors.py`` scores the rule annotator and the keyword baseline (``baseline``) on it.
"""
