"""Time: ISO 8601 text at the edges, Unix epoch seconds everywhere inside, and the hour and day in seconds."""

from __future__ import annotations

from datetime import UTC, datetime

HOUR = 3_600.0
DAY = 86_400.0


def parse_iso(text: str) -> float:
    """Epoch seconds of an ISO 8601 date or date-time ('Z' accepted; no zone means UTC). ValueError if unreadable."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def to_iso(ts: float) -> str:
    """UTC ISO 8601 to the second."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
