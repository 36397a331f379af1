"""Detector benchmark: the rule annotator and a keyword baseline on the labelled corpus (issue 19).

The corpus (bench/detector_corpus/): seeded synthetic traces in five styles, the guard
simulator's runs, hand-labelled real traces from ../shared/data, the MAST human file, and a
blind batch of real traces (``fresh``: labelled without running any detector, all held, never
read for tuning; see detector_corpus/FRESH.md). Each sample is labelled for all 14 MAST modes and
belongs to a fixed dev or held split; tune on dev, report on held. Per mode: precision (with a 95% Wilson interval), recall, F1 and coverage (share
of samples where the annotator decided, i.e. did not say unknown), for the rule detectors beside
the baseline; macro-F1 is over the modes with at least one positive label, unknown counted as not
present.

    .venv/bin/python bench/detectors.py                      # dev split, text table
    .venv/bin/python bench/detectors.py --split held --markdown
    .venv/bin/python bench/detectors.py --split held --write-docs   # rewrite the table in docs/detectors.md
    .venv/bin/python bench/detectors.py --split all --json figures.json
    .venv/bin/python bench/detectors.py --errors FM-3.2,FM-3.3           # which dev traces the rules get wrong
    .venv/bin/python bench/detectors.py --split held --sources fresh     # the blind batch alone
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from detector_corpus.baseline import baseline_verdicts
from detector_corpus.generator import generate
from detector_corpus.labels import MAST_CODES, Sample
from detector_corpus.metrics import ModeScore, macro_f1, score_all
from detector_corpus.real import FRESH_LABELS, mast_human_samples, real_samples
from detector_corpus.sim_source import sim_samples

from mastkit.annotate.factory import make_annotator

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "detectors.md"
START, END = "<!-- detector-bench:start -->", "<!-- detector-bench:end -->"
SOURCES = ("synthetic", "sim", "real", "mast_human", "fresh")


def load_corpus(
    sources: Sequence[str] = SOURCES, *, seed: int = 0, n: int = 400, shared: Path | None = None,
    note: Callable[[str], None] | None = None,
) -> list[Sample]:  # fmt: skip
    """The samples of the chosen sources (real ones only when the shared data is there)."""
    out: list[Sample] = []
    if "synthetic" in sources:
        out += generate(seed, n)
    if "sim" in sources:
        out += sim_samples()
    if "real" in sources:
        out += real_samples(shared, on_skip=note)
    if "mast_human" in sources:
        out += mast_human_samples(shared)
    if "fresh" in sources and FRESH_LABELS.exists():
        out += real_samples(shared, FRESH_LABELS, on_skip=note, prefix="fresh:")
    return out


def rule_verdicts(samples: Sequence[Sample]) -> list[dict[str, str]]:
    """The rule annotator's verdict per mode for each sample (through the public annotator API)."""
    annotator = make_annotator("rules", taxonomy="mast")

    async def run() -> list[dict[str, str]]:
        out = []
        for s in samples:
            ann = await annotator.annotate(s.trace)
            out.append({v.code: str(v.verdict) for v in ann.verdicts})
        return out

    return asyncio.run(run())


def base_verdicts(samples: Sequence[Sample]) -> list[dict[str, str]]:
    return [{c: "present" if p else "absent" for c, p in baseline_verdicts(s.trace).items()} for s in samples]


def evaluate(samples: Sequence[Sample]) -> dict[str, Any]:
    """Scores of the rules and the baseline over ``samples``, overall and per source family."""
    gold = [s.labels for s in samples]
    verdicts = {"rules": rule_verdicts(samples), "baseline": base_verdicts(samples)}
    result: dict[str, Any] = {"samples": len(samples), "annotators": {}}
    families = sorted({s.source.split(":")[0] for s in samples})
    for name, vs in verdicts.items():
        scores = score_all(MAST_CODES, gold, vs)
        by_family = {}
        for fam in families:
            idx = [i for i, s in enumerate(samples) if s.source.split(":")[0] == fam]
            by_family[fam] = macro_f1(score_all(MAST_CODES, [gold[i] for i in idx], [vs[i] for i in idx]))
        result["annotators"][name] = {"scores": scores, "macro_f1": macro_f1(scores), "by_family": by_family}
    result["families"] = {fam: sum(s.source.split(":")[0] == fam for s in samples) for fam in families}
    result["errors"] = errors(samples, verdicts["rules"])
    return result


def errors(
    samples: Sequence[Sample], verdicts: Sequence[Mapping[str, str]]
) -> dict[str, dict[str, list[str]]]:
    """Per mode, the samples the annotator gets wrong: ``fp`` (said present, labelled absent) and
    ``fn`` (labelled present, not said present), each as ``trace_id (source): note``."""
    out: dict[str, dict[str, list[str]]] = {}
    for code in MAST_CODES:
        fp: list[str] = []
        fn: list[str] = []
        for s, v in zip(samples, verdicts, strict=True):
            gold, said = s.labels[code], v.get(code) == "present"
            if gold is None or gold == said:
                continue
            (fn if gold else fp).append(f"{s.trace_id} ({s.source}): {s.note}")
        out[code] = {"fp": fp, "fn": fn}
    return out


def error_text(result: Mapping[str, Any], codes: Sequence[str]) -> str:
    lines = []
    for code in codes:
        for kind, name in (("fp", "false positives"), ("fn", "missed")):
            wrong = result["errors"][code][kind]
            lines.append(f"{code} {name} of the rules ({len(wrong)}):")
            lines += [f"  {w}" for w in wrong]
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _ci(s: ModeScore) -> str:
    ci = s.precision_ci
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def rows(result: Mapping[str, Any]) -> list[list[str]]:
    rules: dict[str, ModeScore] = result["annotators"]["rules"]["scores"]
    base: dict[str, ModeScore] = result["annotators"]["baseline"]["scores"]
    out = []
    for code in MAST_CODES:
        r, b = rules[code], base[code]
        out.append([
            code, str(r.positives), str(r.n), _f(r.precision) + _ci(r), _f(r.recall), _f(r.f1), _f(r.coverage),
            _f(b.precision) + _ci(b), _f(b.recall), _f(b.f1),
        ])  # fmt: skip
    return out


HEADER = ["mode", "n+", "n", "rules P [95% CI]", "rules R", "rules F1", "rules cov", "base P [95% CI]", "base R",
          "base F1"]  # fmt: skip


def _summary(result: Mapping[str, Any]) -> list[str]:
    a = result["annotators"]
    fams = ", ".join(f"{k} {v}" for k, v in result["families"].items())
    lines = [
        f"samples: {result['samples']} ({fams})",
        f"macro-F1 (modes with a positive label; unknown = not present): rules {_f(a['rules']['macro_f1'])}, "
        f"baseline {_f(a['baseline']['macro_f1'])}",
    ]
    for fam in result["families"]:
        lines.append(
            f"  {fam}: rules {_f(a['rules']['by_family'][fam])}, baseline {_f(a['baseline']['by_family'][fam])}"
        )
    return lines


def markdown(result: Mapping[str, Any], split: str) -> str:
    lines = [
        f"Split `{split}`, regenerated by `python bench/detectors.py --split {split} --write-docs`.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows(result)]
    lines += [""] + [("- " + s.strip()) for s in _summary(result)]
    return "\n".join(lines)


def text(result: Mapping[str, Any]) -> str:
    table = [HEADER, *rows(result)]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in table]
    return "\n".join([*out, "", *_summary(result)])


def as_json(result: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "samples": result["samples"],
        "families": result["families"],
        "errors": result["errors"],
    }
    for name, a in result["annotators"].items():
        out[name] = {
            "macro_f1": a["macro_f1"],
            "by_family": a["by_family"],
            "modes": {
                c: {
                    "n": s.n,
                    "positives": s.positives,
                    "tp": s.tp,
                    "fp": s.fp,
                    "fn": s.fn,
                    "precision": s.precision,
                    "precision_ci": s.precision_ci,
                    "recall": s.recall,
                    "f1": s.f1,
                    "coverage": s.coverage,
                }
                for c, s in a["scores"].items()
            },
        }
    return out


PRECISION = ROOT / "src" / "mastkit" / "annotate" / "detectors" / "precision.json"


def precision_table(samples: Sequence[Sample], split: str, command: str) -> dict[str, Any]:
    """Per rule detector: precision of its present verdicts and negative predictive value of its
    absent verdicts on ``samples`` (the table rule verdicts take their confidence from)."""
    from datetime import UTC, datetime

    from mastkit.annotate.detectors._base import detectors

    verdicts = rule_verdicts(samples)
    table: dict[str, Any] = {}
    for det in detectors("mast"):
        pairs = [(s.labels.get(det.code), v.get(det.code)) for s, v in zip(samples, verdicts, strict=True)]
        said = {side: [g for g, v in pairs if v == side and g is not None] for side in ("present", "absent")}
        entry: dict[str, Any] = {"code": det.code}
        for side, want in (("present", True), ("absent", False)):
            golds = said[side]
            right = sum(g is want for g in golds)
            entry[side] = {
                "value": round(right / len(golds), 4) if golds else None,
                "n": len(golds),
                "right": right,
            }
        table[det.name] = entry
    return {
        "generated": datetime.now(UTC).date().isoformat(),
        "command": command,
        "split": split,
        "samples": len(samples),
        "note": "present.value = precision of present verdicts; absent.value = share of absent verdicts that "
        "are right (negative predictive value); n = verdicts measured. Read by "
        "mastkit.annotate.detectors._precision.",
        "detectors": table,
    }


def write_docs(block: str, path: Path = DOCS) -> None:
    """Replace the text between the markers in ``path`` with ``block``."""
    doc = path.read_text()
    if START not in doc or END not in doc:
        raise SystemExit(f"{path}: markers {START} / {END} not found")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{START}\n{block}\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "held", "all"), default="dev")
    ap.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated, of {', '.join(SOURCES)}")
    ap.add_argument("--seed", type=int, default=0, help="synthetic generator seed")
    ap.add_argument("--n", type=int, default=400, help="number of synthetic traces")
    ap.add_argument("--shared", type=Path, default=None, help="shared data folder (default ../shared/data)")
    ap.add_argument("--json", nargs="?", const="-", default=None, help="print JSON (or write it to a file)")
    ap.add_argument("--markdown", action="store_true", help="print the markdown table for docs/detectors.md")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the table block in docs/detectors.md")
    ap.add_argument(
        "--write-precision",
        action="store_true",
        help=f"rewrite {PRECISION.relative_to(ROOT)} (use --split dev)",
    )
    ap.add_argument(
        "--errors", metavar="CODES", default=None,
        help="also list the rules' false positives and misses for these modes (comma-separated, or 'all')",
    )  # fmt: skip
    args = ap.parse_args(argv)
    sources = [s for s in args.sources.split(",") if s]
    bad = [s for s in sources if s not in SOURCES]
    if bad:
        ap.error(f"unknown sources: {bad}")
    corpus = load_corpus(
        sources, seed=args.seed, n=args.n, shared=args.shared, note=lambda m: print(m, file=sys.stderr)
    )
    if args.split != "all":
        corpus = [s for s in corpus if s.split == args.split]
    if not corpus:
        print("no samples", file=sys.stderr)
        return 1
    if args.write_precision:
        if args.split != "dev":
            ap.error("--write-precision measures on the dev split only (--split dev)")
        cmd = "python bench/detectors.py --split dev --write-precision"
        PRECISION.write_text(json.dumps(precision_table(corpus, args.split, cmd), indent=1) + "\n")
        print(f"wrote {PRECISION.relative_to(ROOT)}", file=sys.stderr)
    result = evaluate(corpus)
    if args.json is not None:
        data = json.dumps(as_json(result), indent=2)
        if args.json == "-":
            print(data)
        else:
            Path(args.json).write_text(data)
    if args.markdown or args.write_docs:
        block = markdown(result, args.split)
        if args.write_docs:
            write_docs(block)
        if args.markdown:
            print(block)
    if args.json != "-" and not args.markdown:
        print(text(result))
    if args.errors:
        codes = list(MAST_CODES) if args.errors == "all" else [c for c in args.errors.split(",") if c]
        bad = [c for c in codes if c not in MAST_CODES]
        if bad:
            ap.error(f"unknown modes: {bad}")
        print(error_text(result, codes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
