"""Summarise a mutmut 3 run: per module killed / survived / equivalent / timeout / not checked.

Reads ``mutants/**/*.py.meta`` (mutmut's own result files) and, for each surviving mutant, the
difference between the mutated function and the original in ``mutants/``. A survivor is counted
as *equivalent* when it is listed in docs/mutation.md's equivalence table (``EQUIVALENT`` below)
or when it only changes the letter case of an SQL string whose text SQLite reads
case-insensitively (keywords, table and column names that do not become result keys).

usage: python scripts/mutation_summary.py [--survivors] src/mastkit/store/db.py ...
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import sys
from collections import Counter
from pathlib import Path

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", None: "not checked"}
STATUS.update({c: "timeout" for c in (24, -24, 36, 152, 255)})

# mutant name -> why it cannot change behaviour (see docs/mutation.md)
EQUIVALENT: dict[str, str] = {}
_EQ_FILE = Path(__file__).with_name("mutation_equivalent.txt")
if _EQ_FILE.exists():
    for line in _EQ_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition(" ")
            EQUIVALENT[name] = why.strip()

_SQL = re.compile(r"\b(SELECT|FROM|WHERE|JOIN|ORDER BY|INSERT|DELETE|COALESCE|MAX|AND|OR|IS|NOT|NULL|DESC)\b")
# upper-cased result columns change the keys of dict(row): not equivalent
_RESULT_KEYS = re.compile(r"^\"?(SELECT )?[A-Z]\.[A-Z_]+, ")


def _diff(text: str, fs: dict[str, ast.AST], name: str) -> tuple[list[str], list[str]]:
    orig = fs.get(re.sub(r"__mutmut_\d+$", "__mutmut_orig", name))
    mut = fs.get(name)
    if orig is None or mut is None:
        return [], []
    a = (ast.get_source_segment(text, orig) or "").splitlines()[1:]
    b = (ast.get_source_segment(text, mut) or "").splitlines()[1:]
    d = [x for x in difflib.unified_diff(a, b, lineterm="", n=0) if not x.startswith(("---", "+++", "@@"))]
    return [x[1:].strip() for x in d if x[0] == "-"], [x[1:].strip() for x in d if x[0] == "+"]


def _sql_case_only(minus: list[str], plus: list[str]) -> bool:
    if len(minus) != 1 or len(plus) != 1:
        return False
    a, b = minus[0], plus[0]
    if a == b or a.lower() != b.lower() or not _SQL.search(a):
        return False
    return b == b.lower() or not _RESULT_KEYS.search(b.lstrip("f"))


def main(argv: list[str]) -> int:
    show = "--survivors" in argv
    rows = []
    total: Counter[str] = Counter()
    for module in [a for a in argv if not a.startswith("--")]:
        path = Path("mutants") / module
        codes = json.loads(Path(f"{path}.meta").read_text(encoding="utf-8"))["exit_code_by_key"]
        text = path.read_text(encoding="utf-8")
        fs = {
            n.name: n
            for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        counts: Counter[str] = Counter()
        for key, code in codes.items():
            status = STATUS.get(code, f"other({code})")
            if status == "survived":
                minus, plus = _diff(text, fs, key.rsplit(".", 1)[-1])
                if key in EQUIVALENT or _sql_case_only(minus, plus):
                    status = "equivalent"
                elif show:
                    print(key, *(f"\n    - {m}" for m in minus), *(f"\n    + {p}" for p in plus))
            counts[status] += 1
        total += counts
        rows.append((module, counts))
    rows.append(("**all**", total))
    print(
        "| module | mutants | killed | survived | equivalent | timeout | no tests | not checked | % killed |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for module, c in rows:
        checked = c["killed"] + c["survived"] + c["timeout"]
        pct = f"{100 * (c['killed'] + c['timeout']) / checked:.1f}" if checked else "-"
        print(
            f"| {module} | {sum(c.values())} | {c['killed']} | {c['survived']} | {c['equivalent']} | "
            f"{c['timeout']} | {c['no tests']} | {c['not checked']} | {pct} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
