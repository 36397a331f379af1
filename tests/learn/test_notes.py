"""The offline note-maker: domain-free notes from a trace's own signals."""

from __future__ import annotations

from tests.learn._kit import tool_trace

from mastkit.learn.notes import normalise_message, offline_notes
from mastkit.traces.model import Event, Outcome, Termination, Trace


def test_normalise_masks_numbers_ids_paths_and_values() -> None:
    msg = "Traceback...\nPermissionError: [Errno 13] denied: '/srv/app/config.yaml' for user 4f3a9c2e1b at https://x.io/a"
    out = normalise_message(msg)
    assert out == "PermissionError: [Errno <n>] denied: <value> for user <id> at <url>"
    assert normalise_message("not enough seats on flight HAT123") == "not enough seats on flight <id>"
    assert normalise_message("open /a/b/c.txt failed") == "open <path> failed"


def test_two_runs_with_different_subjects_give_the_same_note() -> None:
    a = offline_notes(tool_trace("a", ["Error: file /home/ann/x.csv not found (code 2)"]))
    b = offline_notes(tool_trace("b", ["Error: file /var/db/y.csv not found (code 7)"]))
    ta = [n.text for n in a if n.signal == "tool_error"]
    assert (
        ta
        == [n.text for n in b if n.signal == "tool_error"]
        == ["tool call failed with error: Error: file <path> not found (code <n>)"]
    )
    (n,) = [n for n in a if n.signal == "tool_error"]
    assert n.seqs == [1, 2] and n.agent == "agent" and n.quote and "/home/ann/x.csv" in n.quote


def test_retries_of_a_failing_call_and_the_stop_after_it() -> None:
    ns = offline_notes(tool_trace("r", ["boom: connection refused"], repeat=3))
    texts = {n.signal: n.text for n in ns}
    assert texts["repetition"] == "the agent retried the same failing call unchanged several times"
    assert texts["stop"] == "the run stopped right after a failed step without recovering from the error"
    assert all(n.failed for n in ns)


def test_a_clean_successful_run_has_no_notes_and_limits_are_noted() -> None:
    ok = Trace(
        trace_id="ok",
        source_format="test",
        events=[Event(seq=0, kind="message", actor="user", role="user", content="hi"),
                Event(seq=1, kind="message", actor="agent", role="assistant", content="Here you go.")],
        outcome=Outcome(success=True),
    )  # fmt: skip
    assert offline_notes(ok) == []
    capped = ok.model_copy(update={"termination": Termination(reason="max_steps", at_seq=1), "outcome": None})
    n, det = offline_notes(capped)
    assert n.text == "the run hit its step limit before the task was done" and n.seqs == [1] and n.failed
    # the rule detectors' findings become notes too, named by the mode they found
    assert det.signal == "detector" and det.text.startswith("unaware of termination conditions: ")


def test_giving_up_is_noted() -> None:
    t = tool_trace("g", [])
    t = t.model_copy(
        update={"events": [*t.events[:-1], t.events[-1].replace(content="I cannot complete this.")]}
    )
    assert [n.text for n in offline_notes(t)] == ["the agent gave up and stopped without completing the task"]
