"""The annotation store (one SQLite file): runs, annotations, model calls, response cache, errors."""

from mastkit.errors import StoreError
from mastkit.store.db import CachedResponse, Store, StoredAnnotation, trace_hash

__all__ = ["CachedResponse", "Store", "StoreError", "StoredAnnotation", "trace_hash"]
