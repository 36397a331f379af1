"""``make_annotator``: build the rules, llm or hybrid annotator from plain settings."""

from __future__ import annotations

from typing import Any, Literal

from mastkit.annotate.rule_annotator import RuleAnnotator
from mastkit.annotate.run import Annotator
from mastkit.errors import MastkitError
from mastkit.taxonomy import Taxonomy, load_taxonomy


def make_annotator(
    kind: Literal["rules", "llm", "hybrid"] = "rules",
    *,
    taxonomy: str | Taxonomy = "mast",
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    cache: Any = None,
    budget_usd: float | None = None,
    budget_total_usd: float | None = None,
    samples: int = 1,
    examples: bool = False,
    window_tokens: int | None = None,
    structured_output: bool = True,
    redact: bool = True,
    concurrency: int = 8,
    prices: str | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    assume_price: float | None = None,
    timeout: float = 120.0,
    max_output_tokens: int | None = None,
    max_windows: int | None = None,
    max_event_chars: int | None = None,
    provider_options: dict[str, Any] | None = None,
) -> Annotator:
    """An annotator ready for :func:`mastkit.annotate.annotate`.

    ``rules`` needs nothing else. ``llm`` and ``hybrid`` need ``model`` as ``provider:name``
    (``openai:gpt-4o-mini``, ``anthropic:claude-sonnet-4-5``, ``ollama:llama3``...) and, for
    self-hosted servers, ``base_url``. ``cache`` (a :class:`mastkit.store.Store`) makes re-runs free.
    ``max_windows`` caps the windows a long trace is cut into (beyond it the middle is left out,
    and the annotation records how much); ``max_event_chars`` is the longest event text shown
    whole. ``timeout`` is seconds per HTTP attempt; ``provider_options`` go to
    :func:`mastkit.providers.get_provider` unchanged (``retry``, ``max_attempts``, ``json_mode``,
    ``context_window``, ``on_call``...).

    Costs and budgets: ``budget_usd`` caps this run's spending, ``budget_total_usd`` the
    spending of all runs on the store given as ``cache`` together. Either cap needs a known
    price: from the default table, ``prices`` (a TOML/JSON file), ``price_in``/``price_out``
    (USD per million tokens), or ``assume_price`` (an upper bound used when the model has no
    price); otherwise :class:`~mastkit.providers.UnknownPriceError` is raised.
    """
    tax = taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)
    if kind == "rules":
        return RuleAnnotator(tax)
    if kind not in ("llm", "hybrid"):
        raise MastkitError(f"unknown annotator {kind!r}: use rules, llm or hybrid")
    if not model:
        raise MastkitError(f"the {kind} annotator needs --model provider:name (e.g. openai:gpt-4o-mini)")
    from mastkit.annotate.judge.judge import JudgeAnnotator, JudgeOptions
    from mastkit.llm.spend import make_budget
    from mastkit.providers import get_provider, load_prices
    from mastkit.providers.pricing import set_price

    price_table = load_prices(prices) if prices else None
    provider = get_provider(
        model,
        base_url=base_url,
        api_key=api_key,
        redact=redact,
        concurrency=concurrency,
        timeout=timeout,
        prices=price_table,
        **(provider_options or {}),
    )
    options = JudgeOptions(
        samples=samples,
        examples=examples,
        hybrid=kind == "hybrid",
        window_tokens=window_tokens,
        structured_output=structured_output,
        **({"max_output_tokens": max_output_tokens} if max_output_tokens is not None else {}),
        **({"max_windows": max_windows} if max_windows is not None else {}),
        **({"max_event_chars": max_event_chars} if max_event_chars is not None else {}),
    )
    set_price(provider, price_in=price_in, price_out=price_out, assume_price=assume_price)
    budget = make_budget(provider, budget_usd=budget_usd, budget_total_usd=budget_total_usd, store=cache)
    return JudgeAnnotator(tax, provider, options=options, cache=cache, budget=budget)
