"""What feedback needs to know about each failure mode: how severe it is and what to do instead.

**Severity.** A mode's ``severity`` field in the taxonomy wins when it is set (``fatal``,
``high``, ``medium``, ``low``; ``critical``/``major``/``moderate``/``minor`` are read as
synonyms). Otherwise MAST modes take the defaults of :data:`MAST_SEVERITY`, and modes of any
other taxonomy are ``medium``. Ties are broken by the category's weight
(:data:`MAST_CATEGORY_WEIGHT` for MAST: verification failures first, they are the strongest
single predictor of a failed run; then specification, then misalignment), then by the
verdict's confidence, then by where the mode first shows, then by taxonomy order.

MAST defaults, and why:

* ``fatal`` — FM-1.1 (the task's own requirements broken: the outcome is wrong by
  definition), FM-3.1 (the work is left unfinished), FM-3.3 (a wrong check certifies a wrong
  result: the failure is invisible to the agent);
* ``high`` — FM-1.4, FM-1.5, FM-2.3, FM-2.6, FM-3.2 (the run often still fails, but the
  damage can be repaired within it);
* ``medium`` — FM-1.3, FM-2.2, FM-2.4, FM-2.5 (they waste turns or lose information);
* ``low`` — FM-1.2, FM-2.1 (process problems that seldom decide the outcome alone).

**What to do instead.** :data:`MAST_DO_INSTEAD` holds one instruction per MAST mode, written
to the agent that will make the next attempt (the taxonomy's ``fix_hints`` are written to the
people who build the system). Other taxonomies use a mode's first fix hint, else its
definition turned into "Avoid this: …".
"""

from __future__ import annotations

from mastkit.taxonomy import FailureMode, Taxonomy

__all__ = [
    "MAST_CATEGORY_WEIGHT",
    "MAST_DO_INSTEAD",
    "MAST_SEVERITY",
    "SEVERITY_RANK",
    "category_weight",
    "do_instead",
    "severity",
    "severity_rank",
]

SEVERITY_RANK: dict[str, int] = {"fatal": 4, "high": 3, "medium": 2, "low": 1}
"""Severity levels, most severe highest."""

_SYNONYMS = {"critical": "fatal", "major": "high", "moderate": "medium", "minor": "low"}

MAST_SEVERITY: dict[str, str] = {
    "FM-1.1": "fatal",
    "FM-3.1": "fatal",
    "FM-3.3": "fatal",
    "FM-1.4": "high",
    "FM-1.5": "high",
    "FM-2.3": "high",
    "FM-2.6": "high",
    "FM-3.2": "high",
    "FM-1.3": "medium",
    "FM-2.2": "medium",
    "FM-2.4": "medium",
    "FM-2.5": "medium",
    "FM-1.2": "low",
    "FM-2.1": "low",
}
"""Default severity of the MAST modes (used when the taxonomy gives none)."""

MAST_CATEGORY_WEIGHT: dict[str, int] = {"FC3": 3, "FC1": 2, "FC2": 1}
"""Tie-break between MAST modes of equal severity: verification, then specification, then misalignment."""

MAST_DO_INSTEAD: dict[str, str] = {
    "FM-1.1": "Re-read the task's explicit requirements (format, limits, forbidden tools) and check "
    "your result against each one before you finish.",
    "FM-1.2": "Do only the work your role assigns and leave other roles' decisions to them.",
    "FM-1.3": "Do not repeat a call that already gave the same result; change the arguments or the "
    "approach, or stop and report what blocks you.",
    "FM-1.4": "Keep a short list of the facts and decisions already settled, consult it before each "
    "step, and never ask again for what you were given.",
    "FM-1.5": "Know the stop condition before you start, and finish with the result as soon as it is met.",
    "FM-2.1": "Build on the progress made so far instead of restarting the task.",
    "FM-2.2": "When a required input is missing or ambiguous, ask a clarifying question instead of guessing.",
    "FM-2.3": "Restate the objective before each step and drop any sub-goal that does not serve it.",
    "FM-2.4": "Pass on every finding, constraint and error the others need in your hand-off message.",
    "FM-2.5": "Acknowledge each correction from the user or another agent and act on it before moving on.",
    "FM-2.6": "Make each action match the plan you just stated; if the plan changes, say so first.",
    "FM-3.1": "Do not stop until every required output exists; check the task's list of deliverables "
    "before you declare it done.",
    "FM-3.2": "After your last change, run a check that exercises the task (tests, a reproduction) and "
    "read its result before you claim success.",
    "FM-3.3": "Check the claim itself: the check must fail before the fix and pass after it; a status "
    "probe or a check that failed is not proof.",
}
"""One "what to do instead" instruction per MAST mode, addressed to the agent."""


def _is_mast(taxonomy: Taxonomy) -> bool:
    return taxonomy.id == "mast"


def severity(mode: FailureMode, taxonomy: Taxonomy) -> str:
    """The severity level of ``mode``: its own field, else the MAST default, else ``medium``."""
    own = (mode.severity or "").strip().lower()
    own = _SYNONYMS.get(own, own)
    if own in SEVERITY_RANK:
        return own
    if _is_mast(taxonomy) and mode.code in MAST_SEVERITY:
        return MAST_SEVERITY[mode.code]
    return "medium"


def severity_rank(mode: FailureMode, taxonomy: Taxonomy) -> int:
    """:func:`severity` as a number (fatal 4 … low 1)."""
    return SEVERITY_RANK[severity(mode, taxonomy)]


def category_weight(mode: FailureMode, taxonomy: Taxonomy) -> int:
    """The tie-break weight of ``mode``'s category (0 outside MAST)."""
    return MAST_CATEGORY_WEIGHT.get(mode.category, 0) if _is_mast(taxonomy) else 0


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    for end in (". ", "; ", " — "):
        cut = text.find(end)
        if 0 < cut < 200:
            return text[:cut]
    return text[:200].rstrip(" .")


def do_instead(mode: FailureMode, taxonomy: Taxonomy) -> str:
    """One instruction for the next attempt that avoids ``mode`` (a full sentence)."""
    if _is_mast(taxonomy) and mode.code in MAST_DO_INSTEAD:
        return MAST_DO_INSTEAD[mode.code]
    if mode.fix_hints:
        hint = " ".join(mode.fix_hints[0].split()).rstrip(".")
        return hint + "."
    return f"Avoid this: {_first_sentence(mode.definition)}."
