"""Maintenance: decay, pruning, association building, consolidation, the bulletin and the scheduler thread."""

from __future__ import annotations

from .associate import Associator
from .budget import Budget
from .bulletin import BulletinBuilder, changes_since
from .consolidate import Consolidator
from .decay import effective_importance
from .jobs import JOB_NAMES, Job, Maintenance
from .scheduler import Scheduler

__all__ = [
    "JOB_NAMES",
    "Associator",
    "Budget",
    "BulletinBuilder",
    "Consolidator",
    "Job",
    "Maintenance",
    "Scheduler",
    "changes_since",
    "effective_importance",
]
