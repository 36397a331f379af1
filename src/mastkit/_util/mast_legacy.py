"""Codes of the MAST annotation rounds, mapped to the published 14-mode MAST taxonomy.

MAST's human annotations (MAD_human_labelled_dataset.json) were made with three
taxonomy versions whose codes were renumbered between rounds (MAST issue #18):

* Round 1: 18 modes (1.1-1.5, 2.1-2.6, 3.1-3.4, 4.1-4.3);
* Rounds 2 and 3: 17 modes (1.1-1.7, 2.1-2.7, 3.1-3.3);
* the "Generalizability" round and the paper (v2/v3): the final 14 modes.

Four early modes have no final equivalent and map to None. The map is by mode
*name* (the code alone is ambiguous across rounds); the per-round code tables
are kept for sources that give only a code.

Used by the MAST-Data importer (``traces``) and by the taxonomy package; it sits
in ``_util`` because those two packages must not import each other.
"""

from __future__ import annotations

import functools
import re

# Published MAST (paper v2/v3 numbering of 3.2/3.3).
MAST14_NAMES: dict[str, str] = {
    "FM-1.1": "Disobey Task Specification",
    "FM-1.2": "Disobey Role Specification",
    "FM-1.3": "Step Repetition",
    "FM-1.4": "Loss of Conversation History",
    "FM-1.5": "Unaware of Termination Conditions",
    "FM-2.1": "Conversation Reset",
    "FM-2.2": "Fail to Ask for Clarification",
    "FM-2.3": "Task Derailment",
    "FM-2.4": "Information Withholding",
    "FM-2.5": "Ignored Other Agent's Input",
    "FM-2.6": "Reasoning-Action Mismatch",
    "FM-3.1": "Premature Termination",
    "FM-3.2": "No or Incomplete Verification",
    "FM-3.3": "Incorrect Verification",
}

# Early-round mode names -> final code (None: dropped from the final taxonomy).
LEGACY_NAMES: dict[str, str | None] = {
    "poor task constraint compliance": "FM-1.1",
    "disobey role specification": "FM-1.2",
    "step repetition": "FM-1.3",
    "backtracking interruption": "FM-1.4",
    "unaware of stopping conditions": "FM-1.5",
    "conversation reset": "FM-2.1",
    "fail to elicit clarification": "FM-2.2",
    "derailment from task": "FM-2.3",
    "withholding relevant information": "FM-2.4",
    "ignoring suggestions from agents": "FM-2.5",
    "inconsistency between reasoning and action": "FM-2.6",
    "ill specified termination condition leading to premature termination": "FM-3.1",
    "lack of critical verification": "FM-3.2",
    "lack of result verification": "FM-3.3",
    "undetected conversation ambiguities and contradictions": None,
    "unbatched repetitive execution": None,
    "disagreement induced inaction": None,
    "waiting for known information": None,
}

ROUND1_CODES: dict[str, str | None] = {
    "1.1": "FM-1.1", "1.2": "FM-2.6", "1.3": None, "1.4": "FM-2.2", "1.5": "FM-1.5",
    "2.1": None, "2.2": "FM-1.3", "2.3": "FM-1.4", "2.4": "FM-2.1", "2.5": "FM-2.3", "2.6": "FM-1.2",
    "3.1": None, "3.2": "FM-2.4", "3.3": "FM-2.5", "3.4": None,
    "4.1": "FM-3.1", "4.2": "FM-3.3", "4.3": "FM-3.2",
}  # fmt: skip
"""Round 1 (18 modes) code -> final code."""

ROUND23_CODES: dict[str, str | None] = {
    "1.1": "FM-1.1", "1.2": "FM-2.6", "1.3": "FM-1.5", "1.4": None, "1.5": "FM-1.3", "1.6": "FM-1.4",
    "1.7": "FM-1.2", "2.1": "FM-2.1", "2.2": "FM-2.2", "2.3": "FM-2.3", "2.4": None, "2.5": None,
    "2.6": "FM-2.4", "2.7": "FM-2.5", "3.1": "FM-3.1", "3.2": "FM-3.2", "3.3": "FM-3.3",
}  # fmt: skip
"""Rounds 2-3 (17 modes) code -> final code."""

FINAL_CODES: dict[str, str | None] = {k.removeprefix("FM-"): k for k in MAST14_NAMES}

_SPLIT = re.compile(r"^\s*(?:FM-)?(?P<code>\d\.\d)\s*(?P<name>[^\n]*)")


def _norm(name: str) -> str:
    name = re.sub(r"[^a-z ]+", " ", name.lower().replace("witholding", "withholding"))
    return " ".join(name.split())


_FINAL_BY_NAME: dict[str, str | None] = {_norm(v): k for k, v in MAST14_NAMES.items()}
_FINAL_BY_NAME.update(
    {"information withholding": "FM-2.4", "ignored other agents input": "FM-2.5",
     "action reasoning mismatch": "FM-2.6", "no or incorrect verification": None, "weak verification": None}
)  # fmt: skip


@functools.lru_cache(maxsize=1024)  # data sets repeat the same few dozen label texts in every record
def map_label(label: str, round_name: str | None = None) -> tuple[str | None, str | None, str]:
    """Map a MAST label such as ``"2.2 Step repetition\\n\\n<definition>"`` to a final code.

    Returns ``(final_code_or_None, native_code, native_name)``. The name decides when it
    is known; otherwise the code is read with the table of ``round_name``. The names
    "No or Incorrect Verification" / "Weak Verification" (the judge prompt's swapped
    3.2/3.3 names) are ambiguous and map to None unless the round says otherwise.
    """
    m = _SPLIT.match(label)
    code = m.group("code") if m else ""
    name = (m.group("name") if m else label.split("\n", 1)[0]).strip()
    key = _norm(name)
    if key in LEGACY_NAMES:
        return LEGACY_NAMES[key], code or None, name
    if key in _FINAL_BY_NAME and _FINAL_BY_NAME[key] is not None:
        return _FINAL_BY_NAME[key], code or None, name
    table = FINAL_CODES
    if round_name:
        r = round_name.lower()
        if "round 1" in r:
            table = ROUND1_CODES
        elif "round 2" in r or "round 3" in r:
            table = ROUND23_CODES
    return table.get(code), code or None, name
