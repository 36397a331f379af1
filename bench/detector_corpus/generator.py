"""A seeded generator of traces with injected, labelled failures.

Five styles, each a healthy script that a fault edits in one place:

* ``coding``    single agent, tool calls: read, edit, run pytest or npm test, report;
* ``sre``       single agent, tool calls: kubectl get/logs/describe, a fix, a rollout, checks;
* ``support``   customer service with a user, a policy and write actions (cancel, change);
* ``team``      multi-agent coding: a planner, a coder with tools, a reviewer;
* ``research``  chat only, multi-agent: a researcher, a writer and a critic answer a question.

Every trace is labelled for all 14 MAST modes. A healthy script shows none of them: it asks when
the request is ambiguous, verifies after its last change, ends when the work is done, and each
agent keeps to its role. A fault turns exactly one mode on; where a fault genuinely entails a
second mode by the taxonomy's own wording (a tangent that never returns also leaves the task
undone), that second mode is skipped rather than called absent. Hard negatives from issue 19
(a negated success claim, a passing "0 failed" summary, ``2>/dev/null`` on a read, "at first,
but continuing", ``cd /repo && pytest -q`` for ``pytest -q``, a date format fixed after a
validation error, a status polled until it changes) are mixed into healthy and faulty runs alike,
so none of them carries a label. Every message slot has several phrasings.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from detector_corpus.labels import Sample, assign_splits, full_labels
from mastkit.traces.model import AgentInfo, Event, Outcome, Termination, ToolCall, ToolResult, Trace

STYLES: tuple[str, ...] = ("coding", "sre", "support", "team", "research")


@dataclass
class _Run:
    """Builds one trace: numbered events, paired tool calls and results."""

    rng: random.Random
    agent: str = "agent"
    events: list[Event] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    _calls: int = 0

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(list(options))

    def _add(self, kind: str, **kw: Any) -> None:
        self.events.append(Event(len(self.events), kind, **kw))  # type: ignore[arg-type]

    def system(self, text: str) -> None:
        self._add("message", actor="system", role="system", content=text)

    def user(self, text: str) -> None:
        self._add("message", actor="user", role="user", content=text)

    def say(self, text: str, actor: str | None = None, recipients: list[str] | None = None) -> None:
        self._add("message", actor=actor or self.agent, role="assistant", content=text, recipients=recipients)

    def think(self, text: str, actor: str | None = None) -> None:
        self._add("reasoning", actor=actor or self.agent, role="assistant", content=text)

    def call(
        self,
        tool: str,
        args: dict[str, Any],
        output: str,
        *,
        error: bool | None = None,
        exit_code: int | None = None,
        actor: str | None = None,
    ) -> None:
        self._calls += 1
        cid = f"call_{self._calls}"
        self._add(
            "tool_call",
            actor=actor or self.agent,
            role="assistant",
            tool_call=ToolCall(name=tool, call_id=cid, arguments=args, arguments_raw=json.dumps(args)),
        )
        self._add(
            "tool_result",
            role="tool",
            tool_result=ToolResult(
                call_id=cid, name=tool, output=output, is_error=error, exit_code=exit_code
            ),
        )

    def bash(self, command: str, output: str, exit_code: int = 0, actor: str | None = None) -> None:
        self.call(
            "bash", {"command": command}, output, exit_code=exit_code, error=exit_code != 0, actor=actor
        )


@dataclass
class _Script:
    """What a style function returns besides the events."""

    task: str
    present: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    note: str = ""
    agents: list[AgentInfo] = field(default_factory=list)
    termination: Termination = field(default_factory=lambda: Termination(reason="final_answer", by="agent"))
    framework: str = "synthetic"


# -- coding ----------------------------------------------------------------------------------------

_BUGS = (
    ("the CSV reader drops the last row when the file has no trailing newline", "src/csvio/reader.py",
     "tests/test_reader.py", "test_last_row_without_newline", "read_rows"),
    ("slugify() crashes on an empty string", "app/text.py", "tests/test_text.py", "test_slugify_empty",
     "slugify"),
    ("date ranges in the report are off by one day at month ends", "report/dates.py", "tests/test_dates.py",
     "test_month_end_range", "month_range"),
    ("the retry helper sleeps forever when max_retries is 0", "lib/retry.py", "tests/test_retry.py",
     "test_zero_retries", "retry"),
    ("the price formatter rounds 2.675 to 2.67 instead of 2.68", "shop/money.py", "tests/test_money.py",
     "test_round_half_up", "format_price"),
)  # fmt: skip

_JS_BUGS = (
    ("the cart total ignores the discount code", "src/cart.js", "src/cart.test.js", "applies discount", "total"),
    ("the date picker shows Sunday as the first day in the UK locale", "src/picker.js", "src/picker.test.js",
     "week starts monday", "firstDay"),
)  # fmt: skip


def _test_cmd(r: _Run, js: bool, test_file: str) -> tuple[str, str]:
    """(command as announced, command as run) for the test suite."""
    if js:
        cmd = r.pick(("npm test", "npx jest", "npm test --silent"))
        return cmd, cmd
    plain = r.pick(("pytest -q", "python -m pytest -q", f"pytest -q {test_file}"))
    if r.rng.random() < 0.4:
        r.tags.append("cd_prefix")
        return plain, f"cd /repo && {plain}"
    return plain, plain


def _pass_output(r: _Run, js: bool, n: int) -> str:
    if js:
        return f"PASS src/app.test.js\nTests:       {n} passed, {n} total\nTime:        1.2 s"
    form = r.rng.random()
    if form < 0.35:
        r.tags.append("zero_failed")
        return f"{n} passed, 0 failed in 0.8s"
    if form < 0.5:
        r.tags.append("zero_failed")
        return f"===== {n} passed, 0 failed, 0 errors in 1.1s ====="
    return f"{'.' * n}\n{n} passed in 0.{r.rng.randint(2, 9)}s"


def _fail_output(js: bool, n: int, test: str) -> str:
    if js:
        return f"FAIL src/app.test.js\n  ✕ {test}\nTests:       1 failed, {n - 1} passed, {n} total"
    return f"F{'.' * (n - 1)}\nFAILED tests::{test} - AssertionError\n1 failed, {n - 1} passed in 0.5s"


def coding(r: _Run, fault: str) -> _Script:
    js = r.rng.random() < 0.3
    bug, path, test_file, test, func = r.rng.choice(_JS_BUGS if js else _BUGS)
    n = r.rng.randint(5, 40)
    constraint = r.pick(
        ("Do not modify the tests.", "Keep the public signature of the function unchanged.",
         "Only touch the module with the bug.")
    )  # fmt: skip
    give_test = fault == "FM-1.4" or r.rng.random() < 0.3
    task = f"In the repository at /repo, {bug}. Please fix it. {constraint}"
    if give_test:
        task += f" The failing test is {test}."
    if fault == "FM-2.2":
        task = f"In the repository at /repo, one of the {func} helpers misbehaves. Please fix it."
    r.user(task)
    s = _Script(task=task)
    other = path.replace(".py", "_compat.py").replace(".js", ".legacy.js")

    if fault == "FM-2.1":
        s.skip = ("FM-1.3",)

    r.say(r.pick((f"I'll start by reading {path}.", f"Let me look at {path} first.",
                  f"First step: open {path} and find {func}.")))  # fmt: skip
    r.call("read_file", {"path": path}, f"def {func}(value):\n    ...  # 40 lines\n")
    if fault == "FM-2.2":
        r.bash(f"grep -rn 'def {func}' /repo", f"{path}:12:def {func}(value):\n{other}:8:def {func}(value):")
        r.say(r.pick((f"There are two {func} helpers; I'll assume the one in {path} is meant.",
                      f"I'll go with {path}; the other copy is probably the one nobody uses.",
                      f"{path} is the one that matters here; patching it.")))  # fmt: skip
        s.present, s.note = ("FM-2.2",), "two matching helpers, picked one without asking"
    elif r.rng.random() < 0.2:
        r.bash(f"grep -rn 'def {func}' /repo", f"{path}:12:def {func}(value):\n{other}:8:def {func}(value):")
        r.say(f"There are two {func} helpers ({path} and {other}). Which one should I fix?")
        r.user(f"The one in {path}.")
        r.tags.append("asked_clarification")
    if r.rng.random() < 0.15:
        r.say("By the way, the README is outdated; noting it for later and staying on the bug.")
        r.tags.append("mentions_side_issue")

    if fault == "FM-1.3":
        out = f"{path}:12:def {func}(value):"
        for _ in range(r.rng.randint(3, 5)):
            r.bash(f"grep -n '{func}' {path}", out)
        s.present, s.note = ("FM-1.3",), "same grep repeated with the same output"

    if fault == "FM-1.4":
        r.say(r.pick(("Which test is failing? Could you tell me its name?",
                      "Before I go on: what is the name of the failing test?")))  # fmt: skip
        r.user(r.pick((f"As I said in the task, it's {test}.", f"I already told you: {test}.")))
        s.present, s.note = ("FM-1.4",), "asks again for the test name the task gave"

    if fault == "FM-3.1":
        r.say(r.pick((
            f"I couldn't work out why {func} fails. I'm stopping here; next steps would be to patch {path} and run the tests.",
            "This is more involved than expected, so I'll leave it here. Remaining: 1) fix the helper 2) rerun the tests.",
            f"I was not able to fix {func}. Giving up on this one.",
        )))  # fmt: skip
        s.present, s.note = ("FM-3.1",), "gives up before any change"
        return s

    # reproduce (optional), with the hard-negative "not fixed yet"
    announced, cmd = _test_cmd(r, js, test_file)
    if r.rng.random() < 0.5:
        r.bash(cmd, _fail_output(js, n, test), exit_code=1)
        r.say(r.pick(("The bug has not been fixed yet: the failing test reproduces it.",
                      "Reproduced. Nothing is fixed so far; the test fails as described.",
                      "It isn't fixed yet — the test fails as expected before any change.")))  # fmt: skip
        r.tags.append("negated_success")
    if r.rng.random() < 0.3:
        r.say(r.pick(("I couldn't find the cause at first, but continuing with the edge case.",
                      "At first I could not see the cause; continuing with the input handling.")))  # fmt: skip
        r.tags.append("at_first_but_continuing")

    if fault == "FM-2.3":
        r.say(r.pick(("While I'm here, the logging setup is messy; let me reorganise it first.",
                      "Before the bug, I'll modernise the packaging: move setup.py to pyproject.toml.",
                      "First I'll rename the helpers across the project for readability.")))  # fmt: skip
        r.call("edit_file", {"path": "pyproject.toml", "new": "[project]\nname = 'repo'"}, "ok")
        r.call("edit_file", {"path": "logging.conf", "new": "[loggers]\nkeys=root"}, "ok")
        r.bash(cmd, _pass_output(r, js, n))
        r.say(r.pick(("Done: the packaging now uses pyproject.toml and logging is configured centrally.",
                      "I reorganised the logging configuration and moved the packaging to pyproject.toml.")))  # fmt: skip
        s.present, s.skip = ("FM-2.3",), ("FM-1.1", "FM-3.1")
        s.note = "works on a tangent and never returns to the bug"
        return s

    target = path
    if fault == "FM-2.6":
        if "Only touch" in constraint:
            s.skip = ("FM-1.1",)
        r.say(r.pick((f"I'll change only {path}.", f"The fix belongs in {path}; I'll edit that file.")))
        target = other
        s.present, s.note = ("FM-2.6",), "announces an edit of one file, edits another"
    else:
        r.say(r.pick((f"I'll fix {func} in {path}.", f"Now editing {path} to handle the case.",
                      f"Patching {func}.")))  # fmt: skip
    r.call("edit_file", {"path": target, "old": "return rows[:-1]", "new": "return rows"}, "ok")
    if fault == "FM-2.6":
        r.call("edit_file", {"path": path, "old": "return rows[:-1]", "new": "return rows"}, "ok")
    if fault == "FM-1.1":
        if "tests" in constraint:
            r.call("edit_file", {"path": test_file, "old": "assert", "new": "# assert"}, "ok")
            s.note = "edits the tests the task said not to touch"
            s.skip = ("FM-3.3",)
        elif "signature" in constraint:
            r.call(
                "edit_file",
                {"path": path, "old": f"def {func}(value):", "new": f"def {func}(value, strict):"},
                "ok",
            )
            s.note = "changes the public signature the task said to keep"
        else:
            r.call("edit_file", {"path": "src/unrelated/helpers.py", "old": "x", "new": "y"}, "ok")
            s.note = "edits a second module the task said not to touch"
        s.present = ("FM-1.1",)

    if fault == "FM-3.2":
        r.say(r.pick((f"Fixed: {func} now handles the case. The change is complete.",
                      "All done — the bug is fixed.", f"The fix is in {path}; this resolves the issue.")))  # fmt: skip
        s.present, s.note = ("FM-3.2",), "claims the fix without running anything after the edit"
        return s

    smoke = fault == "FM-3.3" and r.rng.random() < 0.5
    if smoke:  # the announcement matches the (wrong) check, so only FM-3.3 is in play
        r.say(r.pick(("Let me run the smoke tests.", "A quick smoke test should tell.")))
    else:
        r.say(r.pick((f"Now I'll run the tests with {announced}.", f"Running `{announced}` to check.",
                      "Let me run the test suite.", "Running the tests again now that the change is in.",
                      "Assuming the change is right, the failing test should pass now; checking.")))  # fmt: skip
    if fault == "FM-3.3":
        if smoke:
            r.bash("pytest -q tests/test_smoke.py" if not js else "npx jest smoke", _pass_output(r, js, 3))
            s.note = "runs an unrelated smoke test and calls the fix verified"
        else:
            r.bash(cmd, _fail_output(js, n, test), exit_code=1)
            s.note = "the tests fail; reported as passing"
        r.say(r.pick(("All tests pass; the fix is verified.", "Tests are green, so the bug is fixed.",
                      "Verified: the suite passes.")))  # fmt: skip
        s.present = ("FM-3.3",)
        return s
    r.bash(cmd, _pass_output(r, js, n))
    if fault == "FM-2.1":
        r.user(task)
        r.say(r.pick(("Starting over from the beginning.", "OK, let me begin again from scratch.")))
        r.call("read_file", {"path": path}, f"def {func}(value):\n    ...  # 40 lines\n")
        r.bash(cmd, _pass_output(r, js, n))
        s.present, s.note = ("FM-2.1",), "task re-issued after the work; the agent starts over"
    r.say(r.pick((f"Fixed {func}: all {n} tests pass.", f"Done. The fix is in {path} and the suite passes.",
                  "The bug is fixed and the tests pass.")))  # fmt: skip
    if fault == "FM-1.5":
        for cmd2 in r.rng.sample(["git status", "ls /repo", f"cat {path}", "git log -1", "pip list"], 3):
            r.say(r.pick(("Let me also check one more thing.", "Continuing.", "One more look.")))
            r.bash(cmd2, "ok")
        s.termination = Termination(reason="max_steps", by="limit")
        s.present, s.note = ("FM-1.5",), "keeps going after reporting done until the step cap"
    return s


# -- SRE -------------------------------------------------------------------------------------------

_CAUSES = (
    ("DB_URL is not set", "Error: environment variable DB_URL is required", "kubectl set env deployment/{svc} DB_URL=postgres://db:5432/app"),
    ("the memory limit is too low", "Killed (OOMKilled): container exceeded memory limit 256Mi",
     "kubectl set resources deployment/{svc} --limits=memory=1Gi"),
    ("the config map points at the wrong port", "dial tcp 10.0.3.7:5433: connect: connection refused",
     "kubectl patch configmap {svc}-config -p '{{\"data\":{{\"DB_PORT\":\"5432\"}}}}'"),
)  # fmt: skip


def sre(r: _Run, fault: str) -> _Script:
    svc = r.pick(("checkout", "payments", "search-api", "inventory", "mailer"))
    ns = r.pick(("prod", "shop", "default"))
    cause, log, fix = r.rng.choice(_CAUSES)
    fix = fix.format(svc=svc)
    pod = f"{svc}-7d9f{r.rng.randint(100, 999)}-x{r.rng.randint(10, 99)}"
    readonly = fault == "FM-1.1"
    task = f"The {svc} pods in namespace {ns} are crash-looping. Find the cause and fix it."
    if readonly:
        task = f"The {svc} pods in namespace {ns} are crash-looping. Investigate and report the cause; do not change anything in the cluster."
    if fault == "FM-2.2":
        task = f"Restart the {svc} deployment and make sure it comes back healthy."
    r.user(task)
    s = _Script(task=task)
    r.say(r.pick(("Let me look at the pods first.", f"Checking the state of the {svc} pods.",
                  "First, the pod status.")))  # fmt: skip
    # with FM-2.2 the task names no namespace, so the first look spans all of them
    r.bash(
        f"kubectl get pods {'-A' if fault == 'FM-2.2' else '-n ' + ns} -l app={svc}",
        f"NAME  READY  STATUS  RESTARTS\n{pod}  0/1  CrashLoopBackOff  7",
    )
    if fault == "FM-1.3":
        for _ in range(r.rng.randint(3, 4)):
            r.bash(
                f"kubectl get pods -n {ns} -l app={svc}",
                f"NAME  READY  STATUS  RESTARTS\n{pod}  0/1  CrashLoopBackOff  7",
            )
        s.present, s.note = (
            ("FM-1.3",),
            "the same get pods again and again, same output, nothing done in between",
        )
    if fault == "FM-2.2":
        r.bash(f"kubectl get deployments -A | grep {svc}", f"prod     {svc}  0/3\nstaging  {svc}  3/3")
        r.say(r.pick((f"{svc} exists in prod and staging; I'll restart the prod one.",
                      "Two deployments match; going with prod since that is usually what people mean.",
                      f"Restarting {svc} in prod.")))  # fmt: skip
        ns = "prod"
        s.present, s.note = ("FM-2.2",), "two namespaces match, picks one without asking"
    elif r.rng.random() < 0.15:
        r.bash(f"kubectl get deployments -A | grep {svc}", f"{ns}     {svc}  0/3\nstaging  {svc}  3/3")
        r.say(f"Note: {svc} also exists in staging; the task names {ns}, so I'll stay there.")
    logs_cmd = f"kubectl logs {pod} -n {ns}"
    if r.rng.random() < 0.5:
        logs_cmd += " 2>/dev/null"
        r.tags.append("devnull_read")
    if r.rng.random() < 0.4:
        r.bash(logs_cmd + " --previous", "")
        r.say(r.pick(("I couldn't find the cause at first, but continuing with describe.",
                      "No logs from the previous container; I couldn't see the cause at first, continuing.")))  # fmt: skip
        r.tags.append("at_first_but_continuing")
        r.bash(
            f"kubectl describe pod {pod} -n {ns}",
            f"Last State: Terminated\n  Reason: Error\n  Message: {log}",
        )
    else:
        r.bash(logs_cmd, log, exit_code=0)
    if fault == "FM-3.1":
        r.say(r.pick(("I couldn't find the cause. Stopping here.",
                      "I don't see what is wrong; I'll stop and leave it for the on-call engineer.",
                      "Not sure what's going on. Ending the investigation.")))  # fmt: skip
        s.present, s.note = ("FM-3.1",), "gives up although the logs name the cause"
        return s
    r.say(r.pick((f"The cause: {cause}.", f"Found it — {cause}.", f"Root cause is that {cause}.")))
    if readonly:
        r.bash(fix, "deployment updated")
        r.bash(f"kubectl rollout restart deployment/{svc} -n {ns}", f"deployment.apps/{svc} restarted")
        r.bash(f"kubectl rollout status deployment/{svc} -n {ns}", "successfully rolled out")
        r.say(f"The cause was that {cause}; I applied the fix and the rollout succeeded.")
        s.present, s.note = ("FM-1.1",), "the task forbade changes; the agent changed the cluster"
        return s
    if fault == "FM-2.3":
        r.say(r.pick(("Before fixing this, the HPA settings look odd; let me tune the autoscaler.",
                      "While at it, I'll clean up the old ReplicaSets and unused secrets.")))  # fmt: skip
        r.bash(f"kubectl delete rs -n {ns} --selector=old=true", "replicaset deleted")
        r.bash(f"kubectl autoscale deployment/{svc} -n {ns} --min=2 --max=6", "autoscaler created")
        r.say("Cleaned up the old ReplicaSets and set up autoscaling.")
        s.present, s.skip = ("FM-2.3",), ("FM-1.1", "FM-3.1", "FM-3.2")
        s.note = "drifts to cluster housekeeping and never fixes the crash"
        return s
    if fault == "FM-2.6":
        r.say(r.pick(("Before changing anything I'll check the deployment spec.",
                      "Next I'll read the deployment's environment to confirm.")))  # fmt: skip
        r.bash(f"kubectl delete pod {pod} -n {ns}", f'pod "{pod}" deleted')
        s.present, s.note = ("FM-2.6",), "says it will read the spec, deletes a pod instead"
    else:
        r.say(
            r.pick(
                ("Applying the fix.", f"I'll fix it with `{fix.split(' ')[1]}`.", "Fixing the deployment.")
            )
        )
    r.bash(fix + f" -n {ns}", "deployment.apps updated")
    r.bash(f"kubectl rollout restart deployment/{svc} -n {ns}", f"deployment.apps/{svc} restarted")
    if fault == "FM-3.2":
        r.say(r.pick((f"Fixed: {svc} has been restarted with the corrected settings.",
                      "The deployment is fixed; the pods will be healthy now.")))  # fmt: skip
        s.present, s.note = ("FM-3.2",), "restart, then claims healthy with no check"
        return s
    if fault == "FM-3.3":
        r.bash(
            f"kubectl get pods -n {ns} -l app={svc}",
            f"NAME  READY  STATUS  RESTARTS\n{pod}  0/1  CrashLoopBackOff  8",
        )
        r.say(r.pick(("Checked the pods: the fix worked and the service is healthy.",
                      "Verified — the pods are fine now.")))  # fmt: skip
        s.present, s.note = ("FM-3.3",), "the check shows CrashLoopBackOff, reported healthy"
        return s
    if r.rng.random() < 0.5:
        for word in ("0/1  ContainerCreating", "0/1  Running", "1/1  Running")[r.rng.randint(0, 1) :]:
            r.bash(f"kubectl get pods -n {ns} -l app={svc}", f"NAME  READY  STATUS\n{pod[:-3]}new  {word}")
        r.tags.append("polling_changes")
    else:
        r.bash(
            f"kubectl rollout status deployment/{svc} -n {ns}", f'deployment "{svc}" successfully rolled out'
        )
    r.bash(f"kubectl logs deployment/{svc} -n {ns} --since=2m" + (" 2>/dev/null" if "devnull_read" in r.tags else ""),
           "listening on :8080\nGET /healthz 200")  # fmt: skip
    r.say(r.pick((f"Fixed: {cause} was the problem; the pods are running and serving /healthz.",
                  f"{svc} is healthy again (rolled out, health checks return 200).")))  # fmt: skip
    if fault == "FM-1.5":
        for text in r.rng.sample(
            ["Everything is still healthy.", "No change; the service is up.", "Still fine."], 3
        ):
            r.user("continue")
            r.say(text)
        s.termination = Termination(reason="max_turns", by="limit")
        s.present, s.note = ("FM-1.5",), "keeps answering 'continue' after the work is done until the cap"
    return s


# -- customer service ------------------------------------------------------------------------------


def support(r: _Run, fault: str) -> _Script:
    r.agent = "support_agent"
    user_id = f"{r.pick(('mia', 'omar', 'lena', 'raj'))}_{r.rng.randint(1000, 9999)}"
    res = f"{r.pick('ABCDEFGHJK')}{r.pick('LMNPQRSTUV')}{r.rng.randint(1000, 9999)}"
    res2 = f"Z{r.pick('LMNPQRSTUV')}{r.rng.randint(1000, 9999)}"
    city = r.pick(("Boston", "Denver", "Seattle", "Austin"))
    policy = (
        "You are an airline support agent. Policy: a reservation may be cancelled only within 24 hours of booking "
        "or when it has travel insurance. Before any change to a booking, list the details and get an explicit "
        "'yes' from the user. Do not offer compensation unless asked."
    )
    r.system(policy)
    s = _Script(task=policy, agents=[AgentInfo(name="support_agent", role_description="airline support")])
    action = r.pick(("cancel", "date"))
    if action == "cancel":
        ask = r.pick((f"Hi, I'm {user_id}. Please cancel my trip to {city}, reservation {res}.",
                      f"hello, user id {user_id}. I need to cancel booking {res} to {city}."))  # fmt: skip
    else:
        ask = r.pick((f"Hi, I'm {user_id}. Can you move my {city} flight {res} to May 3?",
                      f"user {user_id} here — please change reservation {res} ({city}) to the 3rd of May."))  # fmt: skip
    if fault == "FM-2.2":
        ask = f"Hi, I'm {user_id}. Please {'cancel' if action == 'cancel' else 'move to May 3'} my flight to {city}."
    r.user(ask)
    r.say(r.pick(("Let me pull up your account.", "Sure, I'll look up your profile first.", "One moment.")))
    r.call(
        "get_user_details",
        {"user_id": user_id},
        f'{{"user_id": "{user_id}", "reservations": ["{res}", "{res2}"]}}',
    )
    if fault == "FM-1.3":
        for _ in range(r.rng.randint(2, 3)):
            r.call(
                "get_user_details",
                {"user_id": user_id},
                f'{{"user_id": "{user_id}", "reservations": ["{res}", "{res2}"]}}',
            )
        s.present, s.note = ("FM-1.3",), "the same lookup three times or more"
    if fault == "FM-1.4":
        r.say(
            r.pick(("Could you give me your reservation number?", "What is the booking reference, please?"))
        )
        r.user(r.pick((f"I already gave it: {res}.", f"It's {res}, as I said.")))
        s.present, s.note = ("FM-1.4",), "asks for the reservation number the user already gave"
    if fault == "FM-2.2":
        r.call(
            "get_reservation_details",
            {"reservation_id": res},
            f'{{"id": "{res}", "destination": "{city}", "date": "2026-05-01", "insurance": true}}',
        )
        r.call(
            "get_reservation_details",
            {"reservation_id": res2},
            f'{{"id": "{res2}", "destination": "{city}", "date": "2026-06-11", "insurance": true}}',
        )
        r.say(
            r.pick((f"You have two {city} trips; I'll take the first one, {res}.", f"Proceeding with {res}."))
        )
        s.present, s.note = ("FM-2.2",), "two matching reservations, picks one without asking"
    else:
        r.call(
            "get_reservation_details",
            {"reservation_id": res},
            f'{{"id": "{res}", "destination": "{city}", "date": "2026-05-01", "insurance": true, "booked_hours_ago": 30}}',
        )
    if fault == "FM-2.6":
        r.say(
            r.pick(
                ("Let me check the fare rules before anything else.", "I'll read the fare conditions first.")
            )
        )
        r.call(
            "get_user_details",
            {"user_id": user_id, "fields": ["payment_methods"]},
            '{"payment_methods": ["card_1"]}',
        )
        s.present, s.note = ("FM-2.6",), "says it will read the fare rules, reads payment methods instead"
    if fault == "FM-3.1":
        r.say(r.pick(("I'm not able to help with this request. Goodbye.",
                      "I'll need to hand this over; please contact us again later.")))  # fmt: skip
        s.present, s.note = ("FM-3.1",), "ends the conversation although the change is allowed and possible"
        return s
    verb = "cancel it" if action == "cancel" else "move it to 2026-05-03"
    confirm = fault != "FM-1.1"
    if confirm:
        r.say(
            f"Reservation {res} to {city} on 2026-05-01 has travel insurance, so I can {verb}. Shall I go ahead (yes/no)?"
        )
        r.user(r.pick(("yes", "Yes please.", "yes, go ahead")))
    else:
        s.present, s.note = ("FM-1.1",), "changes the booking without the confirmation the policy requires"
    if action == "cancel":
        write = ("cancel_reservation", {"reservation_id": res})
        r.call(*write, f'{{"id": "{res}", "status": "processing", "refund": "card_1"}}')
    else:
        if r.rng.random() < 0.5:
            r.call("update_reservation_flights", {"reservation_id": res, "date": "May 3"},
                   "422 Unprocessable Entity: date must match YYYY-MM-DD", error=True)  # fmt: skip
            r.tags.append("date_format_fixed")
        r.call("update_reservation_flights", {"reservation_id": res, "date": "2026-05-03"},
               f'{{"id": "{res}", "date": "2026-05-03", "status": "pending"}}')  # fmt: skip
    if fault == "FM-3.2":
        r.say(
            r.pick(
                (
                    "All set — your booking has been updated and confirmed.",
                    "Done! Everything is confirmed on our side.",
                )
            )
        )
        s.present, s.note = ("FM-3.2",), "confirms to the user without checking the booking afterwards"
        return s
    if fault == "FM-3.3":
        r.call(
            "get_reservation_details",
            {"reservation_id": res2},
            f'{{"id": "{res2}", "destination": "{city}", "status": "confirmed"}}',
        )
        r.say("I double-checked: your booking shows the change. You're all set.")
        s.present, s.note = ("FM-3.3",), "verifies by reading the other reservation"
        return s
    final = "cancelled" if action == "cancel" else "2026-05-03"
    r.call(
        "get_reservation_details",
        {"reservation_id": res},
        f'{{"id": "{res}", "status": "{"cancelled" if action == "cancel" else "confirmed"}", "date": "{final}"}}',
    )
    r.say(
        r.pick(
            (
                f"Done: {res} is now {final}. Anything else?",
                f"Your reservation {res} is {final}; I checked it in the system.",
            )
        )
    )
    r.user(r.pick(("No, that's all. Thanks!", "That's it, thank you.")))
    if fault == "FM-1.5":
        offers = ["Is there anything else I can help you with today?", "Can I help with anything else?",
                  "Anything else on your booking?"]  # fmt: skip
        replies = r.rng.sample(["No.", "no thanks", "No, bye."], 3)
        for offer, reply in zip(r.rng.sample(offers, 3), replies, strict=True):
            r.say(offer)
            r.user(reply)
        s.present, s.note = ("FM-1.5",), "keeps the conversation going after the user is done"
    else:
        r.say(r.pick(("You're welcome, have a good trip!", "Glad to help. Goodbye!")))
    if fault == "FM-2.1":
        # the orchestrator re-sends the opening and the agent starts again
        r.system(policy)
        r.user(ask)
        r.say("Let me pull up your account.")
        r.call(
            "get_user_details",
            {"user_id": user_id},
            f'{{"user_id": "{user_id}", "reservations": ["{res}", "{res2}"]}}',
        )
        r.say("I see your reservations; how can I help?")
        s.present, s.skip = ("FM-2.1",), ("FM-1.3", "FM-1.5")
        s.note = "the conversation is restarted after it was resolved"
    return s


# -- multi-agent coding team -----------------------------------------------------------------------


def team(r: _Run, fault: str) -> _Script:
    bug, path, test_file, _test, func = r.rng.choice(_BUGS)
    n = r.rng.randint(5, 30)
    agents = [
        AgentInfo(
            name="Planner", role_description="splits the task and assigns work; decides when the task is done"
        ),
        AgentInfo(name="Coder", role_description="writes and runs code"),
        AgentInfo(
            name="Reviewer", role_description="reviews the Coder's changes and comments; never edits files"
        ),
    ]
    task = f"Fix this bug in /repo: {bug}."
    s = _Script(task=task, agents=agents, framework="synthetic-team")
    r.user(task)
    r.say(r.pick((f"Coder: please fix {func} in {path} and run the tests. Reviewer: review the diff.",
                  f"Plan: 1) Coder patches {path} 2) Coder runs the tests 3) Reviewer approves.")), actor="Planner")  # fmt: skip
    r.call("read_file", {"path": path}, f"def {func}(value):\n    ...", actor="Coder")
    secret = "note: the test database is read-only; use TEST_DB=replica-2"
    r.bash(f"cat {test_file} | head -5", f"# {secret}\nimport pytest", actor="Coder")
    if fault == "FM-2.4":
        r.say(f"I've read {path} and the tests. Starting on the fix.", actor="Coder")
        r.say("I'll run the integration tests in parallel.", actor="Reviewer")
        r.bash(
            "pytest -q tests/integration",
            "E   sqlite3.OperationalError: attempt to write a readonly database\n1 failed",
            exit_code=1,
            actor="Reviewer",
        )
        r.say("Oh — the test file says to use TEST_DB=replica-2; the default DB is read-only.", actor="Coder")
        r.bash("TEST_DB=replica-2 pytest -q tests/integration", "3 passed in 0.6s", actor="Reviewer")
        s.present, s.note = ("FM-2.4",), "the Coder saw the read-only DB note and did not pass it on"
    else:
        r.say(f"Heads-up: {secret.removeprefix('note: ')}.", actor="Coder", recipients=["Reviewer"])
    if fault == "FM-3.1":
        r.say(
            r.pick((f"{func} needs a deeper change than I can make now; stopping here.",
                    "I can't see how to fix this without a redesign. I'll stop.")),
            actor="Coder",
        )  # fmt: skip
        r.say("OK, we end the task here.", actor="Planner")
        s.present, s.note = ("FM-3.1",), "the Coder gives up before any change and the Planner ends the task"
        return s
    r.call("edit_file", {"path": path, "old": "rows[:-1]", "new": "rows"}, "ok", actor="Coder")
    if fault == "FM-1.2":
        r.say("I'll just tighten the fix myself.", actor="Reviewer")
        r.call(
            "edit_file",
            {"path": path, "old": "if not rows", "new": "if rows is None"},
            "ok",
            actor="Reviewer",
        )
        s.present, s.note = ("FM-1.2",), "the Reviewer, whose role excludes edits, edits the file"
    r.bash("TEST_DB=replica-2 pytest -q", _pass_output(r, False, n), actor="Coder")
    if fault == "FM-2.5":
        r.say(
            f"The fix misses the empty-input case: {func}('') still raises. Please add a guard.",
            actor="Reviewer",
        )
        r.say(
            r.pick(("Thanks. The tests pass, so I'm submitting as is.", "Submitting the patch now.")),
            actor="Coder",
        )
        r.say("Submitted. Task complete.", actor="Planner")
        s.present, s.skip = ("FM-2.5",), ("FM-3.3",)
        s.note = "the Reviewer's correction is neither applied nor answered"
        return s
    r.say(r.pick(("Reviewed the diff: it handles the empty case and the tests pass. Approved.",
                  "LGTM — the change is minimal and covered by the tests.")), actor="Reviewer")  # fmt: skip
    if fault == "FM-1.2":
        r.say("Good work, task complete.", actor="Planner")
        return s
    if r.rng.random() < 0.5:
        r.say("Reviewer approved and tests pass. Marking the task as done. TERMINATE", actor="Planner")
    else:
        r.say("The task is complete: fix merged, tests green. TERMINATE", actor="Planner")
    if fault == "FM-1.5":
        asks = r.rng.sample(["Anything else to do?", "Shall we continue?", "Waiting for further tasks."], 3)
        replies = r.rng.sample(["Nothing more, I think.", "Let's continue.", "OK."], 3)
        for ask, reply in zip(asks, replies, strict=True):
            r.say(ask, actor="Coder")
            r.say(reply, actor="Reviewer")
        s.termination = Termination(reason="max_turns", by="limit")
        s.present, s.note = ("FM-1.5",), "the agents keep talking after TERMINATE until the turn cap"
    return s


# -- research / chat -------------------------------------------------------------------------------

_QUESTIONS = (
    ("What was the euro area's annual inflation in 2023?", "5.4%", "annual average; source: Eurostat"),
    ("How tall is the Eiffel Tower including antennas?", "330 m", "since the 2022 antenna; source: SETE"),
    ("When did the James Webb Space Telescope launch?", "25 December 2021", "on Ariane 5; source: NASA"),
    ("What is the boiling point of water at the top of Mount Everest?", "about 70 °C",
     "at roughly 34 kPa; source: USGS"),
)  # fmt: skip


def research(r: _Run, fault: str) -> _Script:
    q, answer, detail = r.rng.choice(_QUESTIONS)
    agents = [
        AgentInfo(name="Researcher", role_description="finds facts and sources"),
        AgentInfo(name="Writer", role_description="writes the final answer from the findings"),
        AgentInfo(
            name="Critic", role_description="checks the draft against the sources; does not write answers"
        ),
    ]
    fmt = r.pick(
        ("Answer in one sentence.", "Answer in at most 25 words.", "Give the answer with its source.")
    )
    task = f"{q} {fmt}"
    s = _Script(task=task, agents=agents, framework="synthetic-chat")
    r.user(task)
    if fault == "FM-2.2":
        q2 = "How tall is the tower?"
        task = f"{q2} {fmt}"
        s.task = task
        r.events[-1].content = task
        r.say("Assuming 'the tower' means the Eiffel Tower.", actor="Researcher")
        answer, detail = "330 m", "since the 2022 antenna; source: SETE"
        s.present, s.note = ("FM-2.2",), "'the tower' is ambiguous; the Researcher guesses"
    r.say(r.pick((f"Found: {answer} ({detail}).", f"Sources agree on {answer}; {detail}.",
                  f"The figure is {answer} — {detail}.")), actor="Researcher")  # fmt: skip
    if fault == "FM-2.3":
        r.say(
            "Interesting side note: let me summarise the history of the measurement methods in detail.",
            actor="Researcher",
        )
        r.say(
            "Methods changed over the decades: triangulation, then laser ranging, then GNSS surveys, then...",
            actor="Researcher",
        )
        r.say("Here is an essay on the history of measurement methods.", actor="Writer")
        s.present, s.skip = ("FM-2.3",), ("FM-1.1", "FM-3.1", "FM-3.2")
        s.note = "drifts to the history of measurement and never answers"
        return s
    if fault == "FM-1.2":
        r.say(f"Final answer: {answer}.", actor="Critic")
        s.present, s.note = ("FM-1.2",), "the Critic writes the final answer, the Writer's job"
        s.skip = ("FM-3.2",)
        return s
    draft = f"{answer} ({detail})."
    if fault == "FM-1.4":
        r.say(r.pick(("Researcher, what figure did you find? I need it for the draft.",
                      "Sorry, what was the number again, and where is it from?")), actor="Writer")  # fmt: skip
        r.say(
            r.pick((f"Same as above: {answer} ({detail}).", f"I posted it just now: {answer}.")),
            actor="Researcher",
        )
        s.present, s.note = ("FM-1.4",), "the Writer asks again for the finding posted just before"
    if fault == "FM-1.1":
        draft = (
            f"Great question! Here is a long and detailed overview. First, some background: {detail}. " * 2
            + f"The answer is {answer}. Sources: various."
        )
        if "source" in fmt:
            draft = f"{answer}."
    r.say(f"Draft: {draft}", actor="Writer")
    if fault == "FM-1.1":
        r.say("The figure matches the sources.", actor="Critic")
        r.say(f"Final: {draft}", actor="Writer")
        s.present, s.note = ("FM-1.1",), f"the answer breaks the requested format ({fmt})"
        return s
    if fault == "FM-2.5":
        r.say("The draft omits the qualifier; please add the detail the source gives.", actor="Critic")
        r.say(f"Final: {answer}.", actor="Writer")
        s.present, s.note = ("FM-2.5",), "the Writer ignores the Critic's correction"
        s.skip = ("FM-1.1",) if "source" in fmt else ()
        return s
    if fault == "FM-3.2":
        r.say(f"Final: {draft}", actor="Writer")
        s.present, s.note = ("FM-3.2",), "the answer goes out without the Critic's check"
        return s
    if fault == "FM-3.3":
        # the Writer's draft has a wrong figure; the Critic "checks" it and approves
        wrong = f"{r.pick(('2.1%', '300 m', '2020', '100 °C'))} ({detail})."
        r.events[-1].content = f"Draft: {wrong}"
        r.say("Checked against the sources: correct.", actor="Critic")
        r.say(f"Final: {wrong}", actor="Writer")
        s.present, s.note = (
            ("FM-3.3",),
            "the Critic approves a draft whose figure contradicts the Researcher's",
        )
        return s
    r.say(r.pick(("Checked against the sources: the figure and the qualifier are right.",
                  "I verified the number in two sources; it holds.")), actor="Critic")  # fmt: skip
    if fault == "FM-2.6":
        r.say("I'll keep the qualifier exactly as the Critic checked it.", actor="Writer")
        r.say(f"Final: {answer}.", actor="Writer")
        s.present, s.note = ("FM-2.6",), "says it will keep the qualifier, drops it"
        s.skip = ("FM-1.1",) if "source" in fmt else ()
        return s
    if fault == "FM-3.1":
        r.say("Let me think about the best phrasing...", actor="Writer")
        s.termination = Termination(reason="unknown", by="unknown")
        s.present, s.note = ("FM-3.1",), "the run ends before any final answer"
        return s
    r.say(f"Final: {draft}", actor="Writer")
    if fault == "FM-1.3":
        for _ in range(2):
            r.say("Checked against the sources: the figure and the qualifier are right.", actor="Critic")
            r.say(f"Final: {draft}", actor="Writer")
        s.present, s.note = ("FM-1.3",), "the same check and final answer repeated verbatim"
    return s


_STYLE_FUNCS: dict[str, Callable[[_Run, str], _Script]] = {
    "coding": coding, "sre": sre, "support": support, "team": team, "research": research,
}  # fmt: skip

FAULTS: dict[str, tuple[str, ...]] = {
    "coding": ("FM-1.1", "FM-1.3", "FM-1.4", "FM-1.5", "FM-2.1", "FM-2.2", "FM-2.3", "FM-2.6", "FM-3.1", "FM-3.2", "FM-3.3"),
    "sre": ("FM-1.1", "FM-1.3", "FM-1.5", "FM-2.2", "FM-2.3", "FM-2.6", "FM-3.1", "FM-3.2", "FM-3.3"),
    "support": ("FM-1.1", "FM-1.3", "FM-1.4", "FM-1.5", "FM-2.1", "FM-2.2", "FM-2.6", "FM-3.1", "FM-3.2", "FM-3.3"),
    "team": ("FM-1.2", "FM-1.5", "FM-2.4", "FM-2.5", "FM-3.1"),
    "research": ("FM-1.1", "FM-1.2", "FM-1.3", "FM-1.4", "FM-2.2", "FM-2.3", "FM-2.5", "FM-2.6", "FM-3.1", "FM-3.2", "FM-3.3"),
}  # fmt: skip
"""The modes each style can inject (``none`` is always possible too)."""

HEALTHY_SHARE = 0.3


def generate_one(seed: int, index: int) -> Sample:
    """The ``index``-th sample of the corpus for ``seed``: its style cycles, its fault is drawn."""
    rng = random.Random(f"detector-corpus|{seed}|{index}")
    style = STYLES[index % len(STYLES)]
    fault = "none" if rng.random() < HEALTHY_SHARE else rng.choice(FAULTS[style])
    run = _Run(rng)
    script = _STYLE_FUNCS[style](run, fault)
    if fault != "none" and fault not in script.present:
        raise AssertionError(f"{style}: fault {fault} was not injected")
    trace = Trace(
        trace_id=f"gen-{seed}-{index:04d}-{style}",
        source_format="synthetic",
        framework=script.framework,
        benchmark="mastkit.detector_corpus",
        task=script.task,
        agents=script.agents or [AgentInfo(name=run.agent)],
        events=run.events,
        termination=script.termination.model_copy(update={"at_seq": len(run.events) - 1}),
        outcome=Outcome(),
    )
    return Sample(
        trace=trace,
        labels=full_labels(script.present, script.skip),
        source=f"synthetic:{style}",
        note=script.note or "healthy",
        tags=sorted(set(run.tags)),
    )


def generate(seed: int = 0, n: int = 300) -> list[Sample]:
    """``n`` labelled synthetic samples for ``seed``, each with its fixed split."""
    samples = [generate_one(seed, i) for i in range(n)]
    splits = assign_splits([(s.source, s.trace_id) for s in samples])
    for s in samples:
        s.split = splits[s.trace_id]
    return samples
