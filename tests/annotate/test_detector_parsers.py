"""The structural parsers under the detectors: shell commands, test-runner summaries, claims."""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors._claims import give_up, success_claim
from mastkit.annotate.detectors._runners import parse_test_summary
from mastkit.annotate.detectors._shell import (
    command_checks,
    command_writes,
    heads,
    is_status_only,
    parse_command,
)
from mastkit.annotate.detectors._signals import pods_unhealthy


@pytest.mark.parametrize(
    ("line", "argvs"),
    [
        ("cd /repo && pytest -q 2>/dev/null", [["cd", "/repo"], ["pytest", "-q"]]),
        ("FOO=1 sudo -u bob -E timeout 30 make test", [["make", "test"]]),
        ("kubectl logs x 2>&1 | tail -5", [["kubectl", "logs", "x"], ["tail", "-5"]]),
        ("bash -c 'pip install x && pytest'", [["pip", "install", "x"], ["pytest"]]),
        ("for f in a b; do sed -i s/x/y/ $f; done", [["sed", "-i", "s/x/y/", "$f"]]),
        ("cat > a.py <<'EOF'\nrm -rf /\nEOF\npython a.py", [["cat"], ["python", "a.py"]]),
        ("echo 'unclosed", [["echo", "'unclosed"]]),
    ],
)
def test_parse_command(line: str, argvs: list[list[str]]) -> None:
    assert [list(c.argv) for c in parse_command(line)] == argvs


def test_output_redirection_is_kept_as_a_write() -> None:
    (cmd,) = parse_command("echo x > config.ini 2>/dev/null")
    assert cmd.writes_to == ("config.ini",) and command_writes(cmd)
    (probe,) = parse_command("pytest -q > /tmp/out.log")
    assert not command_writes(probe) and command_checks(probe)


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        ("sed -i s/a/b/ f.py", True),
        ("sed s/a/b/ f.py", False),
        ("kubectl -n shop rollout restart deploy/x", True),
        ("kubectl rollout status deploy/x", False),
        ("kubectl logs deploy/x -n shop 2>/dev/null", False),
        ("git diff", False),
        ("git checkout -- a.py", True),
        ("curl -s http://x/health", False),
        ("curl -X POST http://x/restart", True),
        ("psql -c 'SELECT 1'", False),
        ("psql -c 'DELETE FROM t'", True),
        ("docker compose up -d", True),
        ("aws ec2 describe-instances", False),
        ("aws ec2 stop-instances --instance-ids i-1", True),
    ],
)
def test_command_writes(line: str, writes: bool) -> None:
    assert any(command_writes(c) for c in parse_command(line)) is writes


def test_heads_compare_structurally() -> None:
    assert heads("cd /repo && pytest -q 2>&1") == {"pytest"}
    assert heads("kubectl -n shop logs x") == {"kubectl logs"}
    assert heads("python -m pytest tests/") == {"python -m pytest"}


def test_status_only_probes() -> None:
    assert is_status_only(parse_command("kubectl get pods -n shop")[0])
    assert not is_status_only(parse_command("kubectl get pods -o json")[0])
    assert not is_status_only(parse_command("curl http://x/health")[0])


@pytest.mark.parametrize(
    ("output", "runner", "passed", "failed"),
    [
        ("==== 1 failed, 5 passed in 0.2s ====", "pytest", 5, 1),
        ("5 passed, 0 failed", "pytest", 5, 0),
        ("12 passed, 1 error in 3.1s", "pytest", 12, 1),
        ("Ran 4 tests in 0.01s\n\nFAILED (failures=1, errors=1)", "unittest", 2, 2),
        ("Tests:       2 failed, 8 passed, 10 total", "jest", 8, 2),
        ("test result: ok. 3 passed; 0 failed; 0 ignored", "cargo", 3, 0),
        ("ok  \tgithub.com/x/y\t0.01s\nok  \tgithub.com/x/z\t0.02s", "go", 2, 0),
        ("  3 passing (4ms)\n  1 failing", "mocha", 3, 1),
    ],
)
def test_parse_test_summary(output: str, runner: str, passed: int, failed: int) -> None:
    s = parse_test_summary(output)
    assert s is not None and (s.runner, s.passed, s.failed) == (runner, passed, failed)
    assert s.ok is (failed == 0)


@pytest.mark.parametrize("output", ["", "all good", "okay then", "FAILED to connect"])
def test_no_summary(output: str) -> None:
    assert parse_test_summary(output) is None


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("The bug is now fixed.", "now fixed"),
        ("Fixed: the pool size was raised.", "Fixed"),
        ("Verified — the pods are healthy.", "Verified"),
        ("All set, your booking has been updated.", "All set"),
        ("I was unsure at first, but the issue is resolved.", "issue is resolved"),
        ("The bug has not been fixed yet.", None),
        ("It should be fixed once the pod restarts.", None),
        ("If the tests pass, the task is complete.", None),
        ("Has the incident been resolved?", None),
        ("The incident will be resolved after the rollout.", None),
    ],
)
def test_success_claim(text: str, claim: str | None) -> None:
    assert success_claim(text) == claim


@pytest.mark.parametrize(
    ("text", "gives_up"),
    [
        ("I cannot complete this task.", True),
        ("I was unable to determine the root cause.", True),
        ("I couldn't find the cause at first, but continuing with the logs.", False),
        ("I couldn't find any errors in the logs; the service is healthy.", False),
        ("Can I give up?", False),
    ],
)
def test_give_up(text: str, gives_up: bool) -> None:
    assert (give_up(text) is not None) is gives_up


def test_pod_tables() -> None:
    bad = "NAME  READY  STATUS  RESTARTS\napi-1  0/1  CrashLoopBackOff  7"
    good = "NAME  READY  STATUS  RESTARTS\napi-1  1/1  Running  0\njob-1  0/1  Completed  0"
    assert pods_unhealthy(bad) and not pods_unhealthy(good) and not pods_unhealthy("no table")
