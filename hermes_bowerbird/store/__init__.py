"""The only package with SQL: one connection, one module per thing stored, and the Store that composes them."""

from .database import Store
from .search import fts_match_expression
from .values import content_hash

__all__ = ["Store", "content_hash", "fts_match_expression"]
