"""A small, hand-checkable annotated store for report tests, with hostile trace text.

Traces (outcome: modes present, first evidence seq):

=========  =======  ===============================================  ======  =========
trace      outcome  present                                          model   framework
=========  =======  ===============================================  ======  =========
t1         failed   FM-1.3 @1-2, FM-3.2 @4 (FM-2.2 unknown)          gpt     AG2
t2         failed   FM-1.3 @0, FM-1.1 @1, FM-2.6 @2, FM-3.2 @3,       gpt     ChatDev
                    FM-3.3 @3   (100 events, one 10,000 chars long)
t3         success  FM-3.2 @0                                        llama   AG2
t4         success  —                                                llama   AG2
t5         failed   —                                                llama   AG2
HOSTILE    failed   FM-1.1 @0                                        HOSTILE <b>fw</b>
=========  =======  ===============================================  ======  =========
"""

from __future__ import annotations

from pathlib import Path

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace

TITLE_SCRIPT = "<script>document.title='pwned'</script>"
IMG = '"><img src=x onerror="document.title=\'pwned-img\'">'
HOSTILE_ID = "x\"'><script>document.title='pwned-id'</script>/../#frag"
HOSTILE_MODEL = '"><img src=x onerror=alert(1)>'
HOSTILE_FW = "<b>fw</b>"
HOSTILE_TEXTS = [
    TITLE_SCRIPT,
    IMG,
    "</textarea></pre></li></section><script>document.title='pwned-break'</script>",
    "javascript:alert(document.domain)",
    '<a href="javascript:alert(1)">click</a>',
    "]]></svg><style>body{display:none}</style>",
]

CODES = [m.code for m in load_taxonomy("mast").modes]
CONFIG = AnnotatorConfig(kind="rules", prompt_version="test-1", taxonomy_id="mast", taxonomy_version="test")


def _trace(
    tid: str,
    success: bool | None,
    *,
    model: str = "gpt",
    framework: str = "AG2",
    benchmark: str = "GAIA",
    texts: list[str] | None = None,
) -> Trace:
    texts = texts or ["plan the task", "write code", "run tests", "tests pass", "done"]
    events: list[Event] = []
    for i, text in enumerate(texts):
        if i == 2:
            events.append(
                Event(
                    seq=i,
                    kind="tool_call",
                    actor="Coder",
                    tool_call=ToolCall(name="bash", call_id="c1", arguments_raw=text),
                )
            )
        elif i == 3:
            events.append(
                Event(
                    seq=i,
                    kind="tool_result",
                    actor="Coder",
                    tool_result=ToolResult(call_id="c1", output=text, is_error=False),
                )
            )
        else:
            events.append(Event(seq=i, kind="message", actor="Coder" if i % 2 else "Planner", content=text))
    return Trace(
        trace_id=tid,
        source_format="test",
        framework=framework,
        model=model,
        benchmark=benchmark,
        task=f"task of {tid} {TITLE_SCRIPT}",
        outcome=None if success is None else Outcome(success=success),
        events=events,
    )


def _annotation(tid: str, present: dict[str, tuple[int, int]], unknown: tuple[str, ...] = ()) -> Annotation:
    verdicts = []
    for code in CODES:
        if code in present:
            lo, hi = present[code]
            verdicts.append(
                ModeVerdict(
                    code=code,
                    verdict="present",
                    confidence=0.9,
                    evidence=[
                        Evidence(seq_start=lo, seq_end=hi, agent="Coder", quote=IMG, note=TITLE_SCRIPT)
                    ],
                    rationale=f"because {TITLE_SCRIPT}",
                    source="rule:test",
                )
            )
        elif code in unknown:
            verdicts.append(
                ModeVerdict(code=code, verdict="unknown", rationale="cannot judge", source="rule:test")
            )
        else:
            verdicts.append(ModeVerdict(code=code, verdict="absent", source="rule:test"))
    return Annotation(
        trace_id=tid,
        config=CONFIG,
        config_hash=CONFIG.config_hash(),
        verdicts=verdicts,
        summary=f"summary {IMG}",
    )


def build_store(path: Path) -> Store:
    """The store described in the module docstring (caller closes it)."""
    store = Store(path)
    store.register_run(CONFIG)
    long_texts = [f"step {i} " + ("x" * 20) for i in range(100)]
    long_texts[50] = "L" * 10_000
    long_texts[3] = IMG
    long_texts[4] = TITLE_SCRIPT
    hostile_events = [*HOSTILE_TEXTS, "final"]
    specs = [
        (
            _trace("t1", False, texts=["plan", TITLE_SCRIPT, IMG, "ok", "claims done"]),
            {"FM-1.3": (1, 2), "FM-3.2": (4, 4)},
            ("FM-2.2",),
        ),
        (
            _trace("t2", False, framework="ChatDev", texts=long_texts),
            {"FM-1.3": (0, 0), "FM-1.1": (1, 1), "FM-2.6": (2, 2), "FM-3.2": (3, 3), "FM-3.3": (3, 60)},
            (),
        ),
        (_trace("t3", True, model="llama"), {"FM-3.2": (0, 0)}, ()),
        (_trace("t4", True, model="llama"), {}, ()),
        (_trace("t5", False, model="llama"), {}, ()),
        (
            _trace(
                HOSTILE_ID,
                False,
                model=HOSTILE_MODEL,
                framework=HOSTILE_FW,
                benchmark=TITLE_SCRIPT,
                texts=hostile_events,
            ),
            {"FM-1.1": (0, 0)},
            (),
        ),
    ]
    for trace, present, unknown in specs:
        h = store.upsert_trace(trace)
        store.put_annotation(_annotation(trace.trace_id, present, unknown), h)
    rows = {r["trace_id"]: r["trace_hash"] for r in store.traces()}
    store.put_attribution(
        "t1",
        rows["t1"],
        "rules",
        "m1",
        Attribution(agent="Coder", step=2, mode="FM-1.3", reason=IMG, method="rules"),
    )
    store.put_attribution(
        HOSTILE_ID,
        rows[HOSTILE_ID],
        "rules",
        "m1",
        Attribution(agent=TITLE_SCRIPT, step=1, mode="FM-1.1", reason=TITLE_SCRIPT, method="rules"),
    )
    store.put_attribution(
        "t2", rows["t2"], "rules", "m1", Attribution(agent="Coder", step=50, method="rules")
    )
    store.log_error("annotate", f"boom {TITLE_SCRIPT}", trace_id="t9", config_hash=CONFIG.config_hash())
    return store
