"""An LLM over a trace: the machinery every model-backed feature shares.

* :mod:`.render` — a trace as compact, seq-numbered text, cut into windows;
* :mod:`.fence` — the secret-nonce fence around trace text, and defusing of look-alike tags;
* :mod:`.call` — one model call with the response cache, the budget and the call log;
* :mod:`.reply` — the JSON object in a reply, read leniently, validated strictly;
* :mod:`.ask` — a reply validated by a pydantic model, with one repair request;
* :mod:`.redact` — a whole trace redacted once, before it is rendered and cut.
* :mod:`.runner` — work over many traces: resume from the store, concurrency, failures,
  the budget stop and a circuit breaker for errors no trace can get past.

The judge (:mod:`mastkit.annotate.judge`), the LLM attributor (:mod:`mastkit.attribute.llm`)
and the features still to come (verifier, feedback, taxonomy learning) build on these, so a
fix to rendering, fencing, redaction, caching or parsing reaches all of them at once.
This package depends only on ``traces``, ``taxonomy`` and ``providers``.
"""
