"""Dedup, merge and supersede a candidate memory against the current memories nearest to it."""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .. import vocabulary as vocab
from ..store import content_hash
from ..text import holds_name, stem_words, value_words
from ..types import Candidate, ItemKind, Memory, MemoryType, NewMemory, Relation
from .changes import (
    NEW_AMOUNT,
    NEW_DOING,
    NEW_HOLDER,
    NEW_TIME,
    ROUTINE_SIMILARITY,
    change,
    corrected,
    new_provider,
    says_new_amount,
    says_new_plan_or_place,
    says_new_time,
    tells_only_of,
)
from .completion import closure, says_booked
from .entities import find_entities
from .given_up import given_up
from .gone import gone
from .provenance import origin_of, promoted_confidence, weaker
from .subjects import only_mentions

if TYPE_CHECKING:
    from ..config import Config
    from ..embeddings.tier import VectorTier
    from ..store import Store

log = logging.getLogger(__name__)

NEIGHBOURS = 8
# a relationship, or having a pet or a vehicle, ended: what was said of them becomes history
_ENDED = re.compile(
    r"\b(?:broke up|break up|split up|splitting up|divorc\w*|separat\w*|single|left me|dumped me|ex|"
    r"passed away|died|put down|rehomed|gave away|sold|totall?ed|scrapped)\b",
    re.IGNORECASE,
)
MAX_RELATED = 3


@dataclass(frozen=True)
class Neighbour:
    """A current memory of the same scope and its cosine similarity to the candidate."""

    memory: Memory
    similarity: float


@dataclass(frozen=True)
class MergePlan:
    """What to do with one candidate: reinforce an existing memory, create one (maybe replacing others), or drop
    it (a statement kept only to close an open item or change a value, when it does neither)."""

    action: str  # "reinforce" | "create" | "drop"
    reason: str
    target: int | None = None  # the memory to reinforce
    supersede: tuple[int, ...] = ()  # current memories the new one replaces
    related: tuple[tuple[int, float], ...] = ()  # (memory id, similarity) for related_to edges
    # the type the new memory takes instead of the candidate's: a todo moved to a new time stays a todo
    kind: MemoryType | None = None
    # the slot it takes instead of the candidate's none: a routine moved to a new time
    subject: str | None = None


@dataclass(frozen=True)
class MergeOutcome:
    action: str  # "created" | "merged" | "dropped"
    memory_id: int
    superseded: tuple[int, ...] = ()
    related: tuple[tuple[int, float], ...] = ()


def distinct_values(a: str, b: str) -> bool:
    """True when one text names a number or proper noun that the other never mentions (a changed value)."""
    words_a = {m.group().lower() for m in value_words(a)}
    words_b = {m.group().lower() for m in value_words(b)}
    return bool((_values(a) - words_b) or (_values(b) - words_a))


def _values(text: str) -> set[str]:
    """Words carrying a value: anything with a digit, and capitalised words that do not start a sentence."""
    out = set()
    for match in value_words(text):
        word = match.group()
        before = text[: match.start()].rstrip()
        starts_sentence = not before or before[-1] in ".!?:\n"
        if any(ch.isdigit() for ch in word) or (
            word[0].isupper() and len(word) > 1 and not starts_sentence
        ):
            out.add(word.lower())
    return out


# words that add nothing to what a statement says
_NO_NEWS = frozenset(
    """
now still also just really actually again too btw anyway well yes yeah the and but got get this that there here with
for from our your his her their its was were are been have has had not any all currently these days today lately
""".split()  # noqa: SIM905
)


def _says_more(new: str, old: str) -> bool:
    """Whether `new` holds a content word (by its first four letters) that `old` does not."""
    said = {w.lower()[:4] for w in stem_words(old)}
    return any(w.lower() not in _NO_NEWS and w.lower()[:4] not in said for w in stem_words(new))


def _still_told(memory: Memory, candidate: Candidate) -> bool:
    """Whether what `memory` only told of someone in the slot ("My girlfriend Anna is lactose intolerant.") still
    holds beside the slot's new value: one naming the same person that ends nothing ("Anna and I got engaged!"),
    while "Jordan and I broke up" makes what was said of Jordan history."""
    if not only_mentions(memory.content) or _ENDED.search(candidate.content):
        return False
    return any(holds_name(candidate.content, name) for name, _ in find_entities(memory.content))


# the slots whose holder a candidate holding no slot of its own replaces, by the change it made: the new memory is
# the routine's new time, the contact's new day or price, or the contact's successor ("We've moved the cat to Oakwood
# Vets" is the vet now)
_TAKEN = {
    NEW_TIME: (vocab.ROUTINES, vocab.CONTACTS),
    NEW_AMOUNT: (vocab.CONTACTS, vocab.MEDICATIONS),
    NEW_HOLDER: (vocab.CONTACTS,),
}


def _slot_taken(
    candidate: Candidate, closable: Sequence[Neighbour], closed: Mapping[int, str]
) -> str | None:
    """The slot of the routine whose time, or the contact whose day or price, the candidate (holding no slot of its
    own) changed, or of a holder that told only the thing whose time changed: the new memory is the slot's new
    value."""
    if candidate.subject:
        return None
    return next(
        (
            n.memory.subject
            for n in closable
            if n.memory.subject
            and (
                n.memory.subject.startswith(_TAKEN.get(closed.get(n.memory.id, ""), ()))
                or (
                    closed.get(n.memory.id) == NEW_TIME
                    and tells_only_of(n.memory.content, candidate.content)
                )
            )
        ),
        None,
    )


def _names_contact(memory: Memory, statement: str) -> bool:
    """Whether `memory` holds a contact's slot and `statement` names that contact or their role ("Chloe put her rate
    up", "Our babysitter's rate went up" against user:contact:babysitter "We pay our babysitter Chloe £8 an hour")."""
    subject = memory.subject or ""
    if not subject.startswith(vocab.CONTACTS):
        return False
    role = subject[len(vocab.CONTACTS) :].replace("-", " ")
    names = [n for n, kind in find_entities(memory.content) if kind in ("person", "thing")]
    # a full name, or one of its words ("Gail" of "Childminder Gail Urquhart"), possessive or not ("Chloe's rate")
    words = {w for n in names for w in n.split() if len(w) > 2 and w[0].isupper()}
    return any(
        holds_name(statement, w, ignore_case=True, possessive=True)
        for w in (role, *names, *words)
        if w
    )


def _provider_for_contact(memory: Memory, statement: str) -> bool:
    """Whether `statement` moved something of the user's to a provider named for `memory`'s contact role, and not
    the one `memory` names ("Oakwood Vets" against user:contact:vet "Our vet is Dr Patel at Meadow Vets")."""
    subject = memory.subject or ""
    name = new_provider(statement)
    if name is None or not subject.startswith(vocab.CONTACTS) or holds_name(memory.content, name):
        return False
    # the role's word or its stem: "Oakwood Vets" for a vet, "Parkside Dental" for a dentist
    role = subject[len(vocab.CONTACTS) :].split("-")[-1][:4]
    return len(role) >= 3 and any(w.lower().rstrip("s")[:4] == role for w in name.split())


def _names_drug(memory: Memory, statement: str) -> bool:
    """Whether `memory` holds a medication's slot and `statement` names that drug ("The doctor upped my lisinopril
    to 20mg" against user:medication:lisinopril "I take 10mg of lisinopril every morning")."""
    subject = memory.subject or ""
    drug = subject[len(vocab.MEDICATIONS) :].replace("-", " ")
    return (
        subject.startswith(vocab.MEDICATIONS)
        and bool(drug)
        and holds_name(statement, drug, ignore_case=True, possessive=True)
    )


def _subjects_compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def plan_merge(
    candidate: Candidate,
    *,
    exact: Memory | None,
    same_subject: Sequence[Memory],
    neighbours: Sequence[Neighbour],
    dedup_threshold: float,
    related_threshold: float,
    now: float,
    closable: Sequence[Neighbour] = (),
) -> MergePlan:
    """Decide a candidate's fate from what the store already holds (pure: no reads, no writes).

    `closable`: the neighbours a statement of the candidate's source may close (see curation/completion.py and
    curation/changes.py): an open item among them that the candidate closes (a todo done, a choice made, a problem
    fixed, a plan given up, an appointment past), a time or amount it changes ("the standup moved to 10am"), a value
    it corrects ("Clementine, not Clementina"), or a place it says closed for good, is superseded by it."""
    closes = _closed(candidate, closable)
    if candidate.closing_only and not closes:
        # a new time is news of its own even when the old one was never kept: "Infusion got pushed to Monday 16
        # September, 10am" answers "when is my next infusion?"; so is a new rent or rate, and a booking of a place
        # named ("I booked the Marriott for the Denver conference" answers "where am I staying?"), a new plan
        # ("Changed our minds about the trip, we're doing Lisbon instead") and a new place ("the offsite moved to
        # Leeds")
        if not (
            says_new_time(candidate.content)
            or says_new_amount(candidate.content)
            or says_booked(candidate.content)
            or says_new_plan_or_place(candidate.content)
        ):
            return MergePlan(
                "drop", "says something is done or changed, and nothing it is about is open"
            )
        candidate = replace(candidate, closing_only=False)
    if exact is not None and exact.is_current(now):
        return MergePlan("reinforce", "identical content", target=exact.id)
    for n in neighbours:
        if n.similarity < dedup_threshold:
            break
        if (
            _subjects_compatible(candidate.subject, n.memory.subject)
            and not distinct_values(candidate.content, n.memory.content)
            # a slot's new value worded much as the old: "I'm a senior developer at Monzo now" after "I'm a junior
            # developer at Monzo" (cosine 0.93) is the slot's new value, not the same one again
            and not (
                candidate.subject is not None
                and candidate.subject == n.memory.subject
                and _says_more(candidate.content, n.memory.content)
            )
        ):
            return MergePlan(
                "reinforce", f"near-duplicate (cosine {n.similarity:.3f})", target=n.memory.id
            )
    replaced = [
        m.id for m in same_subject if content_hash(m.content) != content_hash(candidate.content)
    ]
    if candidate.supersedes is not None and candidate.supersedes not in replaced:
        replaced.append(candidate.supersedes)
    closed = {i: why for i, why in closes.items() if i not in replaced}
    gone = {*replaced, *closed}
    related = tuple(
        (n.memory.id, round(n.similarity, 4))
        for n in neighbours
        if n.similarity >= related_threshold and n.memory.id not in gone
    )[:MAX_RELATED]
    if closed:
        reason = "; ".join(dict.fromkeys(closed.values())) + (
            f"; and the same subject {candidate.subject!r} with a changed value" if replaced else ""
        )
        moved_todo = any(
            n.memory.type is MemoryType.TODO and closed.get(n.memory.id, "").startswith("changed:")
            for n in closable
        )
        return MergePlan(
            "create",
            reason,
            supersede=(*replaced, *closed),
            related=related,
            kind=MemoryType.TODO if moved_todo else None,
            subject=_slot_taken(candidate, closable, closed),
        )
    if replaced:
        reason = (
            f"same subject {candidate.subject!r} with a changed value"
            if candidate.subject
            else "replaced by a newer statement"
        )
        return MergePlan("create", reason, supersede=tuple(replaced), related=related)
    return MergePlan("create", "new", related=related)


def _closed(candidate: Candidate, closable: Sequence[Neighbour]) -> dict[int, str]:
    """The open items among `closable` the candidate closes, and the values it changes, with the reason each.

    A profile slot holder is left to its slot's own updates, but for a routine moved to a new time and a value said
    wrongly (`changes.corrected`). A memory typed identity is not closed: "I have a vet appointment for my dog
    Biscuit tomorrow" is also where the user's dog is named, and how the appointment went does not unsay that; but
    a new time or amount, or a correction, replaces it
    ("Max's football practice moved to Wednesdays" replaces "My son Max has football practice every Tuesday at
    5pm", which stated only the old time; "my daughter's name is Clementine, not Clementina" replaces "My
    daughter's name is Clementina"). A place that closed for good (curation/gone.py) ends even a favourite: "Casa
    Pepe closed down" ends "Our favourite restaurant is Casa Pepe", and a thing the user gave up (curation/given_up.py)
    what they said they use: "I switched from VS Code to PyCharm" ends "I code in VS Code"."""
    out = {}
    for n in closable:
        memory = n.memory
        why = gone(memory.type, memory.content, candidate.content) or given_up(
            memory.type, memory.content, candidate.content
        )
        if why:  # a place that closed ends even a favourite; a thing given up, even a slot's holder
            out[memory.id] = why
            continue
        if memory.subject:
            changed = change(
                memory.type,
                memory.content,
                candidate.content,
                n.similarity,
                time_floor=ROUTINE_SIMILARITY,
            )
            # a routine's slot holds its time too: "Our rehearsals moved to Wednesdays" replaces "I play bass in a
            # band, we rehearse on Thursdays" (and takes its slot, `_slot_taken`); so does a contact's, said of them
            # by name or role: "Chloe comes on Wednesdays now" ends "We pay our babysitter Chloe £8 an hour, she comes
            # Tuesdays"; and any slot's holder that told only the thing and its time: "My work-from-home day is
            # Wednesday now" ends "I work from home on Fridays"
            if changed == NEW_TIME and (
                memory.subject.startswith(vocab.ROUTINES)
                or _names_contact(memory, candidate.content)
                or tells_only_of(memory.content, candidate.content)
            ):
                out[memory.id] = NEW_TIME
            # ...and a value said wrongly is wrong in a slot too: "it's sulfa drugs I'm allergic to, penicillin is
            # fine" ends "I'm allergic to penicillin"
            elif why := corrected(memory.content, candidate.content, n.similarity):
                out[memory.id] = why
            # ...and so is one who held a role: "Dana is the new team lead" ends "Our team lead is Priya Raman"
            # (a new holder is read alike whatever a time's floor); and a contact, when the user moved to a provider
            # named for the role: "We've moved the cat to Oakwood Vets" ends "Our vet is Dr Patel at Meadow Vets"
            elif changed == NEW_HOLDER or _provider_for_contact(memory, candidate.content):
                out[memory.id] = NEW_HOLDER
            # ...and a contact's new price, said of them by name or role: "Chloe put her rate up to £9.50 an hour"
            # ends "We pay our babysitter Chloe £8 an hour" (the new memory takes the contact's slot, `_slot_taken`);
            # so does a drug's new dose: "The doctor upped my lisinopril to 20mg"
            elif changed == NEW_AMOUNT and (
                _names_contact(memory, candidate.content) or _names_drug(memory, candidate.content)
            ):
                out[memory.id] = NEW_AMOUNT
            # ...and what the user studies, when they study another thing instead: "I'm learning Italian now
            # instead" ends "I'm learning Spanish on Duolingo" (one slot per subject, so no slot of its own ends it)
            elif changed == NEW_DOING and memory.subject.startswith(vocab.STUDIES):
                out[memory.id] = NEW_DOING
            continue
        closed = (
            None
            if memory.type is MemoryType.IDENTITY
            else closure(
                memory.type, memory.content, candidate.type, candidate.content, n.similarity
            )
        )
        why = (
            closed
            or change(memory.type, memory.content, candidate.content, n.similarity)
            or corrected(memory.content, candidate.content, n.similarity)
        )
        if why:
            out[memory.id] = why
    return out


class Merger:
    """Reads what a plan needs from the store and vector tier, then executes it (inside the caller's transaction)."""

    def __init__(
        self, store: Store, vectors: VectorTier | None, config: Config, *, actor: str = "curator"
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.config = config
        self.actor = actor

    def neighbours(
        self,
        scope: str,
        vector: np.ndarray | None,
        allowed: Collection[int] | None,
        fresh: Sequence[tuple[Memory, np.ndarray]] = (),
        k: int = NEIGHBOURS,
    ) -> list[Neighbour]:
        """Current memories of `scope` nearest to `vector`, best first (empty without a vector)."""
        if vector is None:
            return []
        hits: dict[int, float] = {}
        if self.vectors is not None and allowed:
            hits.update(self.vectors.search(ItemKind.MEMORY, vector, k * 2, allowed, [scope]))
        for memory, other in fresh:
            hits[memory.id] = float(np.dot(vector, other))
        memories = self.store.memories.get_many(hits)
        now = self.store.clock()
        out = [
            Neighbour(memories[i], s)
            for i, s in hits.items()
            if i in memories and memories[i].scope == scope and memories[i].is_current(now)
        ]
        out.sort(key=lambda n: -n.similarity)
        return out[:k]

    def plan(self, scope: str, candidate: Candidate, neighbours: Sequence[Neighbour]) -> MergePlan:
        exact = self.store.memories.find_by_hash(scope, candidate.content)
        same = (
            self.store.memories.current_by_subject(scope, candidate.subject)
            if candidate.subject
            else []
        )
        same = [
            m for m in same if not _outweighs(m, candidate) and not _still_told(m, candidate)
        ]  # assistant text never replaces the user's
        if same and only_mentions(candidate.content):
            same = []  # "my partner Jordan started at Monzo" adds to what is known of Jordan
        if candidate.supersedes is not None:
            target = self.store.memories.get(candidate.supersedes)
            if (
                target is None
                or target.scope != scope
                or not target.is_current(self.store.clock())
                or _outweighs(target, candidate)
            ):
                candidate = _without_supersedes(candidate)
        return plan_merge(
            candidate,
            exact=exact,
            same_subject=same,
            neighbours=neighbours,
            dedup_threshold=self.config.dedup_threshold,
            related_threshold=self.config.related_threshold,
            now=self.store.clock(),
            closable=[n for n in neighbours if not _outweighs(n.memory, candidate)],
        )

    def apply(
        self, plan: MergePlan, new: NewMemory, candidate: Candidate, *, actor: str | None = None
    ) -> MergeOutcome:
        """Execute a plan; the caller holds the transaction."""
        actor = actor or self.actor
        if plan.action == "drop":
            return MergeOutcome("dropped", 0)
        if plan.action == "reinforce" and plan.target is not None:
            self.store.reinforce(
                plan.target,
                new.provenance,
                reason=plan.reason,
                actor=actor,
                importance=new.effective_importance,
            )
            self._promote(plan.target, candidate, actor)
            return MergeOutcome("merged", plan.target)
        if plan.kind is not None:
            new = replace(new, type=plan.kind)
        if plan.subject is not None:
            new = replace(new, subject=plan.subject)
        memory = self.store.insert_memory(new, actor=actor, reason=plan.reason)
        for old in plan.supersede:
            self.store.supersede(old, memory.id, reason=plan.reason, actor=actor)
        for other, similarity in plan.related:
            self.store.add_edge(memory.id, other, Relation.RELATED_TO, similarity)
        for relation, other in candidate.relations:
            if other != memory.id and self.store.memories.get(other) is not None:
                self.store.add_edge(
                    memory.id, other, relation, 1.0, actor=actor, reason="stated by the model"
                )
        return MergeOutcome("created", memory.id, plan.supersede, plan.related)

    def _promote(self, memory_id: int, candidate: Candidate, actor: str) -> None:
        """A memory first taken from assistant or tool text, now stated by a stronger source, takes its origin."""
        target = self.store.memories.get(memory_id)
        if (
            target is None
            or not candidate.origin
            or not weaker(origin_of(target.metadata), candidate.origin)
        ):
            return
        self.store.set_origin(
            memory_id,
            candidate.origin,
            confidence=promoted_confidence(target.confidence, candidate),
            reason=f"stated again by the {candidate.origin}",
            actor=actor,
        )


def _outweighs(memory: Memory, candidate: Candidate) -> bool:
    """True when the stored memory's source weighs more than the candidate's (the user's word against a page's)."""
    return bool(candidate.origin) and weaker(candidate.origin, origin_of(memory.metadata))


def _without_supersedes(candidate: Candidate) -> Candidate:
    return replace(candidate, supersedes=None)
