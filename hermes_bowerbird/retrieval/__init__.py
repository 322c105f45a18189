"""Hybrid retrieval: query analysis, full-text/vector/graph candidates, fusion, rescoring, rerank, MMR and budgets."""

from __future__ import annotations

from .budget import estimate_tokens, fit_to_budget, format_hits
from .query import QueryAnalysis, TimeWindow, analyze_query
from .results import Hit, RecallRequest, item_key
from .retriever import Retriever
from .scoring import effective_importance

__all__ = [
    "Hit",
    "QueryAnalysis",
    "RecallRequest",
    "Retriever",
    "TimeWindow",
    "analyze_query",
    "effective_importance",
    "estimate_tokens",
    "fit_to_budget",
    "format_hits",
    "item_key",
]
