"""What an agent asserts: success claims and give-ups, read per clause with negation and modality.

A keyword alone is not a claim. "The bug has not been fixed yet", "it should be fixed once the
pod restarts", "is the issue resolved?" and "if all tests pass, ..." mention success without
asserting it. :func:`success_claim` and :func:`give_up` look at the clause that holds the
keyword and reject it when that clause is negated, conditional, future or a question. A
give-up that the agent moves past ("I couldn't find it at first, but continuing") is not one.
"""

from __future__ import annotations

import re

SUCCESS_CLAIM = re.compile(
    r"(?i)\b(?:(?:has|have|is|are|was|been|now)\s+(?:been\s+)?(?:successfully\s+)?"
    r"(?:fixed|resolved|completed|restored|mitigated|solved|implemented|deployed|verified|updated|confirmed|"
    r"cancell?ed|changed|applied|booked|processed|refunded|exchanged|closed|merged|submitted|addressed)"
    r"|(?:change|fix|work|update|task|job|request|migration|deployment|rollout|booking) is (?:now )?"
    r"(?:complete|completed|done|finished|in place)"
    r"|(?:errors?|timeouts?|alerts?|issues?|problems?|crash(?:es)?|failures?|5xx) (?:are|is|have) (?:now )?"
    r"(?:gone|cleared|fixed|resolved|stopped)"
    r"|(?:is|are) (?:now )?(?:healthy(?: again)?|back up|up and running|running normally|"
    r"working (?:again|correctly|as expected))"
    r"|you(?:'re| are) all set|(?:is|are) all set"
    r"|(?:successfully|finally)\s+(?:fixed|resolved|completed|restored|mitigated|solved|implemented|deployed)"
    r"|issue is (?:now )?(?:fixed|resolved)|problem is (?:now )?(?:fixed|resolved|solved)"
    r"|task (?:is|has been) (?:now )?(?:complete|completed|done|finished)"
    r"|all (?:the )?tests (?:now )?pass|tests? (?:are |is )?(?:now )?passing"
    r"|incident (?:is |has been )?(?:now )?resolved|everything (?:is )?working"
    r"|should (?:now )?be (?:fixed|resolved|working)"
    r"|(?:restart|rollback|roll-back|fix|change|patch|update|redeploy)\s+(?:has\s+)?(?:resolved|fixed)"
    r"|resolved the [\w -]{0,40}(?:incident|issue|alert|problem|outage))\b"
    r"|\bverified:|(?:^|\n)\s*(?:resolved|fixed|done)[.!:]"
)

GIVE_UP = re.compile(
    r"(?i)\b(?:i (?:can(?:no|')t|am unable to|was unable to|could not|couldn't|cannot) (?:complete|finish|solve|fix|"
    r"continue|proceed)|i (?:can(?:no|')t|am unable to|was unable to|could not|couldn't|cannot) (?:determine|find|"
    r"identify) (?:the (?:root )?cause|the answer|a (?:way|solution|fix)|the (?:solution|fix|problem))|"
    r"unable to (?:complete|finish|solve|proceed)|i(?:'ll| will) stop here|giving up|i give up|"
    r"beyond (?:my|the) (?:scope|capabilit)|too complex (?:for me )?to (?:complete|solve|finish)|"
    r"end(?:ing)? the investigation|stop(?:ping)? the investigation|(?:i'll|i will|i) (?:need to|have to|must) "
    r"hand (?:this|it) (?:over|off)|contact us (?:again )?later|not sure what(?:'s| is) going on)\b"
)

# A clause ends at these (a claim in one clause is not negated by a "not" in the next).
_CLAUSE = re.compile(r"[,;:()\u2014]|\s-\s|\b(?:but|however|although|though|whereas|and then)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NEGATION = re.compile(
    r"(?i)\b(?:not|never|no longer|nothing|cannot|unable|yet to|fail(?:ed|s)? to|without|neither|nor)\b|n't\b"
)
_MODAL = re.compile(
    r"(?i)\b(?:would|could|might|may|will|once|if|when|whenever|until|unless|after|hope|hopeful|hopefully|expect|"
    r"expected|need(?:s|ed)? to|must|going to|let me|let's|try|trying|whether|want|plan|supposed|"
    r"make sure|ensure|to be|in order|verify that|check (?:that|if|whether)|confirm (?:that|if|whether))\b|'ll\b"
)
# A sentence that opens with the verdict: "Fixed: ...", "All set — ...", "Done."
_OPENING_CLAIM = re.compile(
    r"(?i)^\W*(?:fixed|resolved|done|all set|all done|completed|verified|confirmed|success(?:fully)?)\b(?!-)"
)
_TRAILING_NEGATION = re.compile(r"(?i)^\W{0,3}(?:yet|not yet|no)\b")
# A condition after the claim ("fixed once the pod restarts") or leading the sentence ("If the
# tests pass, the task is complete") makes the whole claim hypothetical.
_TRAILING_CONDITION = re.compile(r"(?i)\b(?:once|if|unless|as soon as|provided|assuming)\b")
_LEADING_CONDITION = re.compile(r"(?i)^\W*(?:if|once|unless|as soon as|provided|assuming|should|in case)\b")
_MOVES_ON = re.compile(
    r"(?i)\b(?:at first|initially|earlier|before|but|however|so (?:i|let)|instead|continu|let me|i'll try|"
    r"i will try|trying|try(?:ing)? (?:a|another)|next|now i|moving on|retry|alternative)\b"
)


def _clauses(sentence: str) -> list[tuple[int, str]]:
    """(offset, text) of each clause of a sentence."""
    out: list[tuple[int, str]] = []
    start = 0
    for m in _CLAUSE.finditer(sentence):
        out.append((start, sentence[start : m.start()]))
        start = m.end()
    out.append((start, sentence[start:]))
    return out


def sentences(text: str) -> list[str]:
    """The text's non-blank sentences (split after . ! ? followed by space, and at line breaks)."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def success_claim(text: str | None) -> str | None:
    """The first success the text asserts (the matched words), or None.

    A match does not count when its sentence is a question, or when its clause is negated
    ("has not been fixed"), conditional or future ("once it restarts it should be fixed",
    "will be resolved"), or followed by "yet".
    """
    if not text:
        return None
    for sentence in sentences(text):
        if sentence.rstrip().endswith("?") or _LEADING_CONDITION.search(sentence):
            continue
        opening = _OPENING_CLAIM.search(sentence)
        if opening and not _NEGATION.search(sentence[: opening.end() + 12]):
            return opening.group(0).strip(" \t*#-")
        for _off, clause in _clauses(sentence):
            for m in SUCCESS_CLAIM.finditer(clause):
                upto = clause[: m.end()]
                tail = clause[m.end() :]
                if (
                    _NEGATION.search(upto)
                    or _TRAILING_NEGATION.search(tail)
                    or _TRAILING_CONDITION.search(tail)
                ):
                    continue
                head = clause[: m.start()]
                if _MODAL.search(head) or _MODAL.search(m.group(0)):
                    continue
                return m.group(0).strip()
    return None


def give_up(text: str | None) -> str | None:
    """The words with which the text gives up on the task, or None.

    Not a give-up: a question, or a sentence that moves past the setback ("I couldn't find the
    cause at first, but continuing with the logs").
    """
    if not text:
        return None
    for sentence in sentences(text):
        m = GIVE_UP.search(sentence)
        if m is None or sentence.rstrip().endswith("?"):
            continue
        if _MOVES_ON.search(sentence[: m.start()]) or _MOVES_ON.search(sentence[m.end() :]):
            continue
        return m.group(0)
    return None


# An affirmative word or phrase; a sentence holding one, with no negation before it, is a yes.
_YES = re.compile(
    r"(?i)\b(?:yes|yeah|yep|yup|sure|ok(?:ay)?|oui|s[ií]|ja|confirm(?:ed)?|i confirm|go ahead|proceed|"
    r"please do|do it|(?:sounds|looks) (?:good|right|fine)|that works|that'?s (?:correct|right)|"
    r"let'?s do (?:it|that))\b"
)
_YES_NEGATION = re.compile(r"(?i)\b(?:no|not|don'?t|do not|never|wait|hold (?:on|off)|stop|cancel that)\b")
_YES_NOT_AFTER = re.compile(r"(?i)\s*(?:not|n't)\b")
_YES_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def affirms(text: str) -> bool:
    """Whether a user message says yes: one of its sentences holds an affirmative with no
    negation before it ("If that's the only option, then yes, go ahead"; "Oui, please proceed";
    not "No, don't proceed yet")."""
    for sentence in _YES_SENTENCE.split(text):
        m = _YES.search(sentence)
        if (
            m
            and not _YES_NEGATION.search(sentence[: m.start()])
            and not _YES_NOT_AFTER.match(sentence[m.end() :])
        ):
            return True
    return False
