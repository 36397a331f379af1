"""Test-runner summaries read structurally: "5 passed, 0 failed" is a pass, not a failure.

:func:`parse_test_summary` finds the closing summary of pytest, unittest, jest/vitest, mocha,
go test and cargo test in a tool output and returns the counts; ``None`` when there is none.
A run failed when it reports at least one failure or error (``0 failed`` does not count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class TestSummary:
    """Counts read from a test runner's summary."""

    __test__ = False  # not a pytest test class

    runner: str
    passed: int = 0
    failed: int = 0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0


_COUNT = re.compile(
    r"(\d+)\s+(passed|failed|errors?|failures?|skipped|xfailed|xpassed|deselected|warnings?)\b"
)
# pytest: "===== 1 failed, 5 passed in 0.12s =====" or -q "5 passed, 0 failed in 0.3s" / "5 passed"
_PYTEST_LINE = re.compile(
    r"(?im)^[=\s]*((?:\d+\s+(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
    r"(?:,\s*)?)+)(?:\s+in\s+[\d.]+\s*m?s\b.*)?[=\s]*$"
)
_UNITTEST_RAN = re.compile(r"(?m)^Ran (\d+) tests? in [\d.]+s")
_UNITTEST_END = re.compile(r"(?m)^(OK|FAILED)\b(?:\s*\(([^)]*)\))?")
_JEST = re.compile(r"(?m)^Tests:\s+(.*?)(\d+) total")
_MOCHA = re.compile(r"(?m)^\s*(\d+) (passing|failing)\b")
_CARGO = re.compile(r"(?m)^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed")
_GO_PKG = re.compile(r"(?m)^(ok(?=[ \t]+\S)|FAIL(?=[ \t]+\S)|--- FAIL:|PASS$|FAIL$)")


def _pytest(text: str) -> TestSummary | None:
    lines = _PYTEST_LINE.findall(text)
    if not lines:
        return None
    counts = {k: int(n) for n, k in _COUNT.findall(lines[-1])}
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    return TestSummary("pytest", passed=counts.get("passed", 0), failed=failed)


def _unittest(text: str) -> TestSummary | None:
    ran = _UNITTEST_RAN.findall(text)
    ends = _UNITTEST_END.findall(text)
    if not ran or not ends:
        return None
    status, detail = ends[-1]
    total = int(ran[-1])
    if status == "OK":
        return TestSummary("unittest", passed=total, failed=0)
    bad = sum(int(n) for key, n in re.findall(r"(failures|errors)=(\d+)", detail)) or 1
    return TestSummary("unittest", passed=max(total - bad, 0), failed=bad)


def _jest(text: str) -> TestSummary | None:
    found = list(_JEST.finditer(text))
    if not found:
        return None
    m = found[-1]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed)", m.group(1))}
    return TestSummary("jest", passed=counts.get("passed", 0), failed=counts.get("failed", 0))


def _mocha(text: str) -> TestSummary | None:
    counts = {k: int(n) for n, k in _MOCHA.findall(text)}
    if not counts:
        return None
    return TestSummary("mocha", passed=counts.get("passing", 0), failed=counts.get("failing", 0))


def _cargo(text: str) -> TestSummary | None:
    found = _CARGO.findall(text)
    if not found:
        return None
    return TestSummary(
        "cargo", passed=sum(int(p) for _s, p, _f in found), failed=sum(int(f) for _s, _p, f in found)
    )


def _go(text: str) -> TestSummary | None:
    marks = _GO_PKG.findall(text)
    if not marks:
        return None
    failed = sum(1 for m in marks if m.startswith(("FAIL", "---")))
    passed = sum(1 for m in marks if m in ("ok", "PASS"))
    return TestSummary("go", passed=passed, failed=failed)


def parse_test_summary(output: str | None) -> TestSummary | None:
    """The summary a test runner printed at the end of ``output``, or None when there is none."""
    if not output:
        return None
    tail = output[-6000:]
    for parse in (_cargo, _jest, _unittest, _pytest, _mocha, _go):
        found = parse(tail)
        if found is not None and (found.passed or found.failed):
            return found
    return None
