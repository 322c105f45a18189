"""Deterministic, typical chat turns for the crash test: repeats (merges), changed values, noise, long replies."""

from __future__ import annotations

CITIES = ["Porto", "Lisbon", "Austin", "Denver", "Oslo"]
DRINKS = ["green tea", "black coffee", "oat latte"]


def turn(i: int) -> tuple[str, str]:
    """The i-th captured turn as (user, assistant)."""
    k = i % 10
    if k == 0:
        return f"I live in {CITIES[(i // 10) % 5]}.", "Good to know where you are based."
    if k == 1:
        return f"I prefer {DRINKS[(i // 10) % 3]} in the morning.", "Noted."
    if k == 2:
        return "thanks!", "You're welcome."
    if k == 3:
        return (
            f"Remember that the staging server for project {i % 7} is staging-{i % 7}.example.org.",
            "I will remember the staging server. " + "It hosts the pre-release build. " * 40,
        )
    if k == 4:
        return (
            f"We decided to ship release {i // 10} on Friday after the review.",
            "Sounds like a plan.",
        )
    if k == 5:
        return (
            f"Can you explain how binary search works for case {i}?",
            "Binary search halves the range each step. " * 30
            + "\n\n"
            + "It needs sorted input. " * 30,
        )
    if k == 6:
        return f"My daughter Sofia is {9 + (i // 100)} years old.", "That's a fun age."
    if k == 7:
        return "ok", "Sure, here is the summary you asked for."
    if k == 8:
        return f"I need to renew my passport before trip {i // 10}.", "Added to your list."
    return f"I am learning Rust and wrote {i} lines today.", "Keep it up!"
