"""The detector corpus (bench/detector_corpus) and its benchmark script (bench/detectors.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED_DATA

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from detector_corpus import manifest  # noqa: E402
from detector_corpus.baseline import baseline_verdicts  # noqa: E402
from detector_corpus.generator import FAULTS, STYLES, generate, generate_one  # noqa: E402
from detector_corpus.labels import MAST_CODES, RealLabel, assign_splits, full_labels, read_real_labels  # noqa: E402
from detector_corpus.metrics import macro_f1, score_all, score_mode  # noqa: E402
from detector_corpus.real import FRESH_LABELS, MAST_HUMAN_SPLIT, REAL_LABELS, mast_human_samples, real_samples  # noqa: E402
from detector_corpus.sim_source import sim_samples  # noqa: E402

from mastkit.analyze.profile import wilson  # noqa: E402
from mastkit.traces.model import Trace  # noqa: E402


def _dump(samples: list) -> list[tuple[str, str, dict, str]]:  # type: ignore[type-arg]
    return [(s.trace.model_dump_json(), s.source, s.labels, s.split) for s in samples]


# -- generator -----------------------------------------------------------------------------------


def test_generator_is_deterministic_per_seed() -> None:
    assert _dump(generate(3, 25)) == _dump(generate(3, 25))
    # another seed gives other traces, not only other ids
    events = [[e.text() for e in s.trace.events] for s in generate(3, 25)]
    assert events != [[e.text() for e in s.trace.events] for s in generate(4, 25)]
    # one sample does not depend on how many are generated
    assert _dump([generate_one(3, 7)]) == [(*d[:3], "dev") for d in _dump([generate_one(3, 7)])]
    assert generate(3, 25)[7].trace.model_dump_json() == generate(3, 8)[7].trace.model_dump_json()


def test_every_sample_labels_all_14_modes_and_the_injected_one() -> None:
    samples = generate(0, 200) + sim_samples(range(3))
    styles = set()
    for s in samples:
        assert list(s.labels) == list(MAST_CODES), s.trace_id
        assert all(v in (True, False, None) for v in s.labels.values())
        present = [c for c, v in s.labels.items() if v]
        if s.note == "healthy":
            assert present == [], s.trace_id
            assert all(v is False for v in s.labels.values()), s.trace_id
        elif s.source.startswith("synthetic"):
            assert len(present) == 1, (s.trace_id, present)
        styles.add(s.source)
        Trace.model_validate_json(s.trace.model_dump_json())  # a valid canonical trace
        assert s.trace.labels == [], "labels in the trace would give the answer away"
    assert {f"synthetic:{st}" for st in STYLES} <= styles
    # every mode a style can inject is injected somewhere in the first 200
    injected = {(s.source.split(":")[1], c) for s in samples if s.source.startswith("synthetic")
                for c, v in s.labels.items() if v}  # fmt: skip
    assert injected == {(st, c) for st, codes in FAULTS.items() for c in codes}


def test_hard_negatives_appear_in_healthy_runs() -> None:
    healthy = [s for s in generate(0, 400) if s.note == "healthy"]
    tags = {t for s in healthy for t in s.tags}
    for tag in ("negated_success", "zero_failed", "devnull_read", "at_first_but_continuing", "cd_prefix",
                "date_format_fixed", "polling_changes", "asked_clarification"):  # fmt: skip
        assert tag in tags, tag
    text = "\n".join(e.text() for s in healthy for e in s.trace.events)
    assert "The bug has not been fixed yet" in text and "2>/dev/null" in text and "0 failed" in text
    assert "cd /repo && pytest -q" in text and "422 Unprocessable Entity" in text


def test_sim_labels_follow_the_paper_numbering() -> None:
    by_note = {}
    for s in sim_samples(range(2)):
        by_note.setdefault(s.note, s.labels)
    assert by_note["false_success"]["FM-3.2"] is True and by_note["false_success"]["FM-3.3"] is False
    assert by_note["ignored_error"]["FM-3.3"] is True
    assert "plan_mismatch" not in by_note
    assert not any(by_note["healthy"].values())


def test_generated_label_file_is_up_to_date() -> None:
    assert manifest.main(["--check"]) == 0, "run python bench/detector_corpus/manifest.py"
    lines = manifest.MANIFEST.read_text().splitlines()
    first = json.loads(lines[0])
    assert set(first) == {"trace_id", "source", "split", "present", "skip", "note", "tags"}


# -- labels and split ----------------------------------------------------------------------------


def test_split_is_stratified_fixed_and_independent_of_other_sources() -> None:
    keys = [("a", f"a{i}") for i in range(50)] + [("b", f"b{i}") for i in range(10)]
    split = assign_splits(keys)
    assert sum(split[f"a{i}"] == "held" for i in range(50)) == 20
    assert sum(split[f"b{i}"] == "held" for i in range(10)) == 4
    assert assign_splits(list(reversed(keys))) == split
    alone = assign_splits(keys[:50])
    assert all(alone[t] == split[t] for _, t in keys[:50])


def test_full_labels_and_the_label_line_model() -> None:
    labels = full_labels(["FM-1.3"], ["FM-3.1"])
    assert labels["FM-1.3"] is True and labels["FM-3.1"] is None and labels["FM-2.2"] is False
    with pytest.raises(ValueError, match="not MAST codes"):
        full_labels(["FM-9.9"])
    line = {
        "path": "x",
        "trace_id": "t",
        "source": "real:x",
        "split": "dev",
        "labels": labels,
        "rationale": "r",
    }
    assert RealLabel.model_validate(line).labels == labels
    short = dict(line, labels={k: v for k, v in labels.items() if k != "FM-2.4"})
    with pytest.raises(ValueError, match=r"FM-2\.4"):
        RealLabel.model_validate(short)


def test_real_label_file_parses() -> None:
    rows = read_real_labels(REAL_LABELS)
    assert len(rows) >= 60
    assert len({(r.path, r.trace_id) for r in rows}) == len(rows)
    assert all(r.rationale.strip() and "\n" not in r.rationale for r in rows)
    sources = {r.source for r in rows}
    assert {"real:tau_bench", "real:who_and_when", "real:trace_samples", "real:inspect_ctf"} <= sources
    for src in sources:
        mine = [r for r in rows if r.source == src]
        assert abs(sum(r.split == "held" for r in mine) - 0.4 * len(mine)) <= 1, src


def test_fresh_labels_are_held_and_new() -> None:
    # The blind batch (FRESH.md) is evaluation only: all held, none of it in the tuned-on files.
    fresh = read_real_labels(FRESH_LABELS)
    assert len(fresh) >= 40 and all(r.split == "held" for r in fresh)
    seen = {(r.path, r.trace_id) for r in read_real_labels(REAL_LABELS)}
    assert not seen & {(r.path, r.trace_id) for r in fresh}
    human = {json.loads(line)["trace_id"] for line in MAST_HUMAN_SPLIT.read_text().splitlines() if line}
    assert not human & {r.trace_id for r in fresh}


@pytest.mark.shared_data
def test_fresh_labels_load_as_their_own_source() -> None:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data not available: {SHARED_DATA}")
    samples = real_samples(SHARED_DATA, FRESH_LABELS, prefix="fresh:")
    assert len(samples) == len(read_real_labels(FRESH_LABELS))
    assert all(s.source.startswith("fresh:real:") and s.split == "held" and s.trace.events for s in samples)
    assert all(s.trace.labels == [] and s.trace.raw is None for s in samples)


@pytest.mark.shared_data
def test_every_real_label_references_a_trace_that_loads() -> None:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data not available: {SHARED_DATA}")
    samples = real_samples(SHARED_DATA)
    assert len(samples) == len(read_real_labels(REAL_LABELS))
    assert all(s.trace.events for s in samples)
    human = mast_human_samples(SHARED_DATA)
    assert len(human) == 19
    assert all(s.trace.labels == [] for s in human)
    # the human file labels most modes; the majority vote has some positives
    assert sum(bool(v) for s in human for v in s.labels.values()) > 10


# -- metrics -------------------------------------------------------------------------------------


def test_mode_score_on_a_hand_checked_case() -> None:
    gold = [True, True, False, False, None, True]
    verdicts = ["present", "unknown", "present", "absent", "present", "absent"]
    s = score_mode("FM-1.3", gold, verdicts)
    # the skipped sample is left out; unknown counts as not present but not as decided
    assert (s.n, s.positives, s.tp, s.fp, s.fn, s.decided) == (5, 3, 1, 1, 2, 4)
    assert s.precision == 0.5 and s.recall == pytest.approx(1 / 3)
    assert s.f1 == pytest.approx(0.4) and s.coverage == pytest.approx(0.8)
    assert s.precision_ci == wilson(1, 2)


def test_scores_with_no_predictions_or_no_positives() -> None:
    none = score_mode("FM-2.4", [True, False], ["unknown", "unknown"])
    assert none.precision is None and none.recall == 0 and none.f1 == 0 and none.coverage == 0
    empty = score_mode("FM-2.4", [False, False], ["absent", "absent"])
    assert empty.f1 is None and empty.recall is None and empty.precision_ci is None
    with pytest.raises(ValueError):
        score_mode("FM-2.4", [True], ["maybe"])


def test_macro_f1_averages_only_modes_with_positives() -> None:
    gold = [{"A": True, "B": False, "C": None}, {"A": False, "B": False, "C": True}]
    verdicts = [{"A": "present", "B": "present", "C": "absent"}, {"A": "absent", "B": "absent"}]
    scores = score_all(("A", "B", "C"), gold, verdicts)
    assert scores["A"].f1 == 1.0 and scores["C"].f1 == 0.0 and scores["B"].positives == 0
    assert scores["C"].n == 1  # the missing verdict counts as unknown, the skipped label is left out
    assert macro_f1(scores) == pytest.approx(0.5)


def test_baseline_matches_keywords_only() -> None:
    trace = generate_one(0, 0).trace.model_copy(update={"events": []})
    assert not any(baseline_verdicts(trace).values())
    from mastkit.traces.model import Event

    said = trace.model_copy(
        update={"events": [Event(0, "message", actor="a", content="I give up, stopping here.")]}
    )
    verdicts = baseline_verdicts(said)
    assert verdicts["FM-3.1"] and not verdicts["FM-1.3"]
    assert list(verdicts) == list(MAST_CODES)
    claim = [Event(0, "message", actor="a", content="Fixed, all done.")]
    assert baseline_verdicts(trace.model_copy(update={"events": claim}))["FM-3.2"]
    checked = [*claim, Event(1, "message", actor="a", content="12 passed")]
    assert not baseline_verdicts(trace.model_copy(update={"events": checked}))["FM-3.2"]


# -- the benchmark script ------------------------------------------------------------------------


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / "detectors.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_bench_runs_on_a_tiny_corpus_and_its_counts_add_up(tmp_path: Path) -> None:
    done = _bench(
        "--sources", "synthetic,sim", "--n", "30", "--split", "all", "--json", str(tmp_path / "f.json")
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads((tmp_path / "f.json").read_text())
    assert figures["samples"] == 30 + len(sim_samples())
    for name in ("rules", "baseline"):
        modes = figures[name]["modes"]
        assert list(modes) == list(MAST_CODES)
        for m in modes.values():
            assert m["tp"] + m["fn"] == m["positives"] and m["tp"] + m["fp"] <= m["n"]
    # the baseline never abstains
    assert all(m["coverage"] == 1.0 for m in figures["baseline"]["modes"].values())
    assert "macro-F1" in done.stdout and "rules P [95% CI]" in done.stdout
    # the listed errors are exactly the counted ones
    for code, m in figures["rules"]["modes"].items():
        assert len(figures["errors"][code]["fp"]) == m["fp"] and len(figures["errors"][code]["fn"]) == m["fn"]
    listed = _bench("--sources", "sim", "--split", "all", "--errors", "FM-1.3")
    assert listed.returncode == 0, listed.stderr
    assert "FM-1.3 false positives of the rules" in listed.stdout and "FM-1.3 missed" in listed.stdout


def test_markdown_block_is_written_between_the_markers(tmp_path: Path) -> None:
    import detectors

    doc = tmp_path / "d.md"
    doc.write_text(f"intro\n{detectors.START}\nold table\n{detectors.END}\noutro\n")
    detectors.write_docs("| new |", doc)
    assert doc.read_text() == f"intro\n{detectors.START}\n| new |\n{detectors.END}\noutro\n"
    doc.write_text("no markers")
    with pytest.raises(SystemExit):
        detectors.write_docs("x", doc)


@pytest.mark.shared_data
def test_docs_table_is_the_scripts_output_for_the_held_split() -> None:
    """docs/detectors.md shows what ``bench/detectors.py --split held --markdown`` prints now."""
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data not available: {SHARED_DATA}")
    done = _bench("--split", "held", "--markdown")
    assert done.returncode == 0, done.stderr
    import detectors

    doc = detectors.DOCS.read_text()
    block = doc.split(detectors.START, 1)[1].split(detectors.END, 1)[0].strip()
    assert block == done.stdout.strip(), "run python bench/detectors.py --split held --write-docs"
