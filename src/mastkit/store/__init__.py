"""The annotation store (one SQLite file): runs, annotations, model calls, response cache, errors."""

from mastkit.store.db import CachedResponse, Store, StoredAnnotation, StoreError, trace_hash

__all__ = ["CachedResponse", "Store", "StoreError", "StoredAnnotation", "trace_hash"]
