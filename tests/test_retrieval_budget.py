"""Token budgets, sentence-boundary truncation and compact lines of hits."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from hermes_bowerbird.retrieval import Hit, estimate_tokens, fit_to_budget, format_hits
from hermes_bowerbird.retrieval.budget import hit_line, truncate_text
from hermes_bowerbird.types import ItemKind, MemoryType, Provenance

WHEN = datetime(2026, 3, 4, 12, tzinfo=UTC).timestamp()
LONG = (
    "The deploy runs from the release branch. Tags are signed with the team key. "
    "Staging gets every build first. Production waits for a green canary. "
) * 4


def hit(hit_id: int, score: float, content: str = LONG, kind: ItemKind = ItemKind.MEMORY) -> Hit:
    return Hit(
        kind,
        hit_id,
        MemoryType.PROCEDURE if kind is ItemKind.MEMORY else None,
        content,
        score,
        WHEN,
        (Provenance("s1", hit_id),),
    )


def test_line_format() -> None:
    line = hit_line(hit(12, 1.0, "Never deploys on Fridays"))
    assert line == "- [procedure #12, 2026-03-04] Never deploys on Fridays"
    episode = hit_line(hit(34, 1.0, "user: hi\n\nthere", ItemKind.EPISODE))
    assert episode == "- [episode #e34, 2026-03-04] user: hi there"
    replaced = hit_line(replace(hit(3, 1.0, "Deploys with Fabric"), superseded=True))
    assert replaced == "- [procedure #3, 2026-03-04, superseded] Deploys with Fabric"
    amended = hit_line(replace(hit(3, 1.0, "Deploys with Fabric and Ansible"), amended_by=(9, 11)))
    assert (
        amended
        == "- [procedure #3, 2026-03-04, amended by #9, #11] Deploys with Fabric and Ansible"
    )


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (100, "The deploy runs from the release branch. Tags are signed with the team key."),
        (45, "The deploy runs from the release branch."),
        (20, "The deploy runs…"),
    ],
)
def test_truncation_at_sentence_boundaries(limit: int, expected: str) -> None:
    text, cut = truncate_text(
        "The deploy runs from the release branch. Tags are signed with the team key. "
        "Staging gets every build first.",
        limit,
    )
    assert text == expected
    assert cut and len(text) <= limit


def test_short_text_is_untouched() -> None:
    assert truncate_text("Short one.", 100) == ("Short one.", False)


@pytest.mark.parametrize("budget", [40, 80, 150, 600])
def test_budget_is_respected(budget: int) -> None:
    hits = [hit(i, 1.0 / i) for i in range(1, 9)]
    text = format_hits(hits, budget)
    assert estimate_tokens(text) <= budget
    assert text.startswith("- [procedure #1,")


def test_best_hits_get_more_room() -> None:
    fitted = fit_to_budget([hit(1, 1.0), hit(2, 0.5), hit(3, 0.25)], 200)
    sizes = [len(h.content) for h in fitted]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    assert all(h.truncated for h in fitted)


def test_tiny_budget_drops_what_cannot_fit() -> None:
    assert fit_to_budget([hit(1, 1.0)], 5) == []
    assert format_hits([hit(1, 1.0)], 5) == ""


def test_no_budget_keeps_everything() -> None:
    hits = [hit(1, 1.0), hit(2, 0.5)]
    assert fit_to_budget(hits, None) == hits
    assert format_hits(hits).count("\n") == 1


def test_an_old_value_is_not_shown_without_what_it_carries() -> None:
    old = replace(hit(1, 1.0), superseded=True, carries=(("memory", 2),))
    later = [hit(2, 0.2), hit(3, 0.2)]
    shown = [h.id for h in fit_to_budget([old, *later], 600)]
    assert shown == [1, 2, 3]
    # its successor does not fit: the old value is not shown alone
    assert [h.id for h in fit_to_budget([old, hit(3, 0.9), hit(2, 0.05)], 60)] == [3]
    assert [h.id for h in fit_to_budget([old, hit(3, 0.9), hit(2, 0.05)], 600)] == [1, 3, 2]
    # a successor given earlier (not among these hits) is no matter
    assert [h.id for h in fit_to_budget([old, hit(3, 0.2)], 600)] == [1, 3]
