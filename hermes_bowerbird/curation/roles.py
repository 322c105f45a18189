"""Who a named person is to the user: "my husband Tomasz" makes "husband" (and "spouse") another name for Tomasz.

The user later asks about people by role, not by name ("when is my husband's birthday?"); the role words become
aliases of the person's entity, so the query reaches what was said about them by name. Only the user's own
relations count ("my", "our", and "the user's" in the agent's notes), only a singular role, and only a name the
entity spotter also found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..text import normalise_entity

# role as said -> the aliases it gives the person (the role first, then the words a question may use for it).
# A role several people share in a store ("kid" for two children) is resolved by the reader, not here.
_PARTNER = ("spouse", "partner", "other half")
_MOTHER = ("mother", "mum", "mom", "mam", "mama")
_FATHER = ("father", "dad", "papa")
_GRANDMOTHER = ("grandmother", "grandma", "gran", "granny", "nan", "nana")
_GRANDFATHER = ("grandfather", "grandpa", "grandad", "granddad")
_FRIEND = ("friend", "mate", "buddy", "pal")
_COLLEAGUE = ("colleague", "coworker", "co-worker", "teammate")
_HOUSEMATE = ("flatmate", "roommate", "housemate")
_LANDLORD = ("landlord", "landlady")
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "husband": ("husband", "hubby", *_PARTNER),
    "wife": ("wife", *_PARTNER),
    "spouse": _PARTNER,
    "partner": ("partner",),
    "boyfriend": ("boyfriend", "partner", "other half"),
    "girlfriend": ("girlfriend", "partner", "other half"),
    "fiance": ("fiance", "fiancé", "partner"),
    "fiancé": ("fiancé", "fiance", "partner"),
    "fiancee": ("fiancee", "fiancée", "partner"),
    "fiancée": ("fiancée", "fiancee", "partner"),
    "daughter": ("daughter", "kid", "child", "girl"),
    "son": ("son", "kid", "child", "boy"),
    "sister": ("sister", "sibling"),
    "brother": ("brother", "sibling"),
    **{word: _MOTHER for word in _MOTHER},
    **{word: _FATHER for word in _FATHER},
    **{word: _GRANDMOTHER for word in _GRANDMOTHER},
    **{word: _GRANDFATHER for word in _GRANDFATHER},
    "aunt": ("aunt", "auntie"),
    "auntie": ("auntie", "aunt"),
    "uncle": ("uncle",),
    "cousin": ("cousin",),
    "niece": ("niece",),
    "nephew": ("nephew",),
    **{
        f"{kin}-in-law": (f"{kin}-in-law", f"{kin} in law")
        for kin in ("mother", "father", "sister", "brother", "son", "daughter")
    },
    "best friend": ("best friend", "closest friend", *_FRIEND),
    **{word: _FRIEND for word in _FRIEND},
    "boss": ("boss", "manager"),
    "manager": ("manager", "boss"),
    "line manager": ("line manager", "manager", "boss"),
    **{word: _COLLEAGUE for word in _COLLEAGUE},
    "neighbour": ("neighbour", "neighbor"),
    "neighbor": ("neighbor", "neighbour"),
    **{word: _LANDLORD for word in _LANDLORD},
    **{word: _HOUSEMATE for word in _HOUSEMATE},
    "doctor": ("doctor", "gp"),
    "gp": ("gp", "doctor"),
    "dentist": ("dentist",),
    "therapist": ("therapist",),
    "accountant": ("accountant",),
    "lawyer": ("lawyer", "solicitor"),
    "solicitor": ("solicitor", "lawyer"),
    "vet": ("vet",),
    "teacher": ("teacher",),
    "tutor": ("tutor",),
    "coach": ("coach",),
    "mentor": ("mentor",),
    # the people the user goes to (vocabulary.CONTACT_ROLES)
    "contractor": ("contractor", "builder"),
    "builder": ("builder", "contractor"),
    "plumber": ("plumber",),
    "electrician": ("electrician",),
    "physio": ("physio", "physiotherapist"),
    "physiotherapist": ("physiotherapist", "physio"),
    "personal trainer": ("personal trainer", "trainer", "coach"),
    "trainer": ("trainer",),
    "nanny": ("nanny", "babysitter"),
    "babysitter": ("babysitter", "sitter"),
    "childminder": ("childminder", "babysitter", "nanny"),
    "cleaner": ("cleaner",),
    "hairdresser": ("hairdresser", "hairstylist"),
    "barber": ("barber",),
    "mechanic": ("mechanic",),
    "pediatrician": ("pediatrician", "paediatrician", "doctor"),
    "paediatrician": ("paediatrician", "pediatrician", "doctor"),
    "optician": ("optician",),
    "dietitian": ("dietitian", "nutritionist"),
    "nutritionist": ("nutritionist", "dietitian"),
    "counsellor": ("counsellor", "counselor", "therapist"),
    "counselor": ("counselor", "counsellor", "therapist"),
    "psychiatrist": ("psychiatrist",),
    "psychologist": ("psychologist", "therapist"),
    "chiropractor": ("chiropractor",),
    "osteopath": ("osteopath",),
    "midwife": ("midwife",),
    "realtor": ("realtor", "estate agent"),
    "supervisor": ("supervisor", "advisor"),
    "advisor": ("advisor", "adviser", "supervisor"),
    "dog": ("dog", "pet"),
    "puppy": ("puppy", "dog", "pet"),
    "cat": ("cat", "pet"),
    "kitten": ("kitten", "cat", "pet"),
}

# roles one person holds at a time: the user who says "my new manager is Tom Becker" or "my husband Tomasz" gives the
# role to that person, and a question by role names them, not whoever held it before ("friend", "teacher" or "doctor"
# may be several people at once, and a role they share names none, see `Graph.names_and_roles`)
ONE_HOLDER = frozenset(
    (
        *ROLE_ALIASES["husband"],
        *ROLE_ALIASES["wife"],
        "boyfriend",
        "girlfriend",
        "fiance",
        "fiancé",
        "fiancee",
        "fiancée",
        "manager",
        "line manager",
        "boss",
        *_LANDLORD,
    )
)
# whose relation: the speaker's, or the user's in a note the agent wrote about them ("User's wife is Maria")
_OWNER = r"(?:my|our|(?:the\s+)?user['’]s)"
_ROLE = "|".join(re.escape(r) for r in sorted(ROLE_ALIASES, key=len, reverse=True))
# one optional word before the role ("my older sister Ines", "my new boss Raj"), never a possessive; lazy, so
# "my best friend Joaquin" is a best friend, not a friend who is best
_ADJECTIVE = r"(?:[a-z]+\s+)??"
# a name as written: capitalised words (the case stays strict inside case-insensitive patterns). A name starts
# where a word starts and its words never give back letters: on one long run of capitals ("AAAA…", "A'A'A'…")
# a name that may begin mid-word and backtrack costs time quadratic in the text
_NAME = r"(?<![\w'’-])(?-i:[A-Z][\w'’-]*+(?:\s+[A-Z][\w'’-]*+){0,2})"
_SAID_NAME = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # "my husband Tomasz", "our daughter, Clementine", "my dog called Rex"
        rf"\b{_OWNER}\s+{_ADJECTIVE}(?P<role>{_ROLE}),?\s+(?:(?:is\s+)?(?:called|named)\s+)?(?P<name>{_NAME})",
        # "We have a dog called Rex", "I have a sister, Ines", "we just adopted a kitten named Miso"
        rf"\b(?:i|we)\s+(?:also\s+|now\s+|just\s+)?(?:have|adopted|got)\s+(?:a|an)\s+{_ADJECTIVE}(?P<role>{_ROLE}),?\s+"
        rf"(?:(?:called|named)\s+)?(?P<name>{_NAME})",
        # "my daughter's name is Clementine"
        rf"\b{_OWNER}\s+{_ADJECTIVE}(?P<role>{_ROLE})['’]s\s+name\s+is\s+(?P<name>{_NAME})",
        # "Joaquin, my best friend,"
        rf"(?P<name>{_NAME}),\s+{_OWNER}\s+{_ADJECTIVE}(?P<role>{_ROLE})\b",
    )
)
# how a terse note names someone by role, the "my" unsaid: "Lachlan (husband) offshore.", "Childminder Gail
# Urquhart. Tue + Thu.", "Sometimes babysitter Chloe come", "living in Victoria with husband Dario": the form says a
# name follows, so a capitalised word the spotter missed counts too
_NOTED_NAME = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"(?P<name>{_NAME})\s*\((?P<role>{_ROLE})\)",
        rf"(?:^|[.!?;:]\s|\b(?:sometimes|the|with)\s)(?:new\s+)?(?P<role>{_ROLE}),?\s+(?P<name>{_NAME})",
        # the same "my" unsaid before a child's role: "Son is Ren, 7 years old", "Daughter is Mio" (a partner's role
        # is not read so: "husband is Italian" gives no name)
        rf"(?:^|(?<=[.!?;:]\s))(?:(?:older|younger|oldest|youngest|eldest|little)\s+)?(?P<role>son|daughter)\s+is\s+"
        rf"(?P<name>{_NAME})",
    )
)
# "my manager is Priya Raman", "my teacher is now Mr Haddad", "Priya Raman is my manager": also how one says "my
# husband is Italian", so these count only for a name the spotter took for a person
_SAID_IS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\b{_OWNER}\s+{_ADJECTIVE}(?P<role>{_ROLE})\s+is\s+(?:now\s+)?(?P<name>{_NAME})",
        rf"(?P<name>{_NAME})\s+is\s+{_OWNER}\s+{_ADJECTIVE}(?P<role>{_ROLE})\b",
        # in chat the "my" goes unsaid where a sentence opens: "contractor is Bill Novak, his cell is ..."
        rf"(?:^|(?<=[.!?;:]\s))(?:new\s+)?(?P<role>{_ROLE})\s+is\s+(?:now\s+)?(?P<name>{_NAME})",
    )
)


# children named together: "our two kids, Mia (7) and Leo (4)", "my sons Tom and Ben" (each a kid; a role the
# children share names neither of them in a question, see `Graph.names_and_roles`)
_CHILDREN = {
    "kids": ("kid", "child"),
    "children": ("kid", "child"),
    "sons": ROLE_ALIASES["son"],
    "daughters": ROLE_ALIASES["daughter"],
}
_AGE = r"(?:\s*\(\d{1,2}\))?"
_SAID_CHILDREN = re.compile(
    rf"\b{_OWNER}\s+(?:two\s+|three\s+|four\s+|\d\s+)?(?:little\s+)?(?P<role>kids|children|sons|daughters),?\s+"
    rf"(?P<first>{_NAME}){_AGE}(?:\s*,\s*(?P<second>{_NAME}){_AGE})?,?\s+and\s+(?P<last>{_NAME}){_AGE}",
    re.IGNORECASE,
)
# children listed as a note: "Kids: Euan 4, Elspeth 2."
_NOTED_CHILDREN = re.compile(
    rf"(?:^|(?<=[.!?;]\s))(?P<role>kids|children|sons|daughters)\s*[:=-]\s*(?P<first>{_NAME})\s*\(?\d{{1,2}}\)?"
    rf"(?:\s*,\s*(?P<second>{_NAME})\s*\(?\d{{1,2}}\)?)?(?:\s*(?:,|and|&)\s*(?P<last>{_NAME})\s*\(?\d{{1,2}}\)?)?",
    re.IGNORECASE,
)


def find_roles(text: str, mentions: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Aliases per person, for the entities spotted in `text` (`mentions`: name -> kind) the speaker calls by role."""
    named = {normalise_entity(n): n for n in mentions}
    people = {k: n for k, n in named.items() if mentions[n] == "person"}
    found: dict[str, tuple[str, ...]] = {}
    for patterns, known in ((_SAID_NAME, named), (_SAID_IS, people)):
        for pattern in patterns:
            for m in pattern.finditer(text):
                name = _known_prefix(m.group("name"), known)
                if name is None:
                    continue
                _add(found, name, ROLE_ALIASES[" ".join(m.group("role").lower().split())])
    for pattern in _NOTED_NAME:
        for m in pattern.finditer(text):
            role = " ".join(m.group("role").lower().split())
            _add(
                found, _known_prefix(m.group("name"), named) or m.group("name"), ROLE_ALIASES[role]
            )
    # children listed in prose must be names the spotter found; listed as a note, the form says they are names
    for pattern, noted in ((_SAID_CHILDREN, False), (_NOTED_CHILDREN, True)):
        for m in pattern.finditer(text):
            for group in ("first", "second", "last"):
                written = m.group(group) or ""
                name = _known_prefix(written, named) or (written if noted else None)
                if name:
                    _add(found, name, _CHILDREN[m.group("role").lower()])
    return found


def _add(found: dict[str, tuple[str, ...]], name: str, aliases: tuple[str, ...]) -> None:
    """Give `name` `aliases` after the ones it has, each once."""
    found[name] = tuple(dict.fromkeys((*found.get(name, ()), *aliases)))


def _known_prefix(written: str, known: dict[str, str]) -> str | None:
    """The longest leading run of `written`'s words that is a spotted entity ("Priya Raman" of "Priya Raman
    Said"), as the spotter wrote it; None when there is none."""
    words = written.split()
    for size in range(len(words), 0, -1):
        name = known.get(normalise_entity(" ".join(words[:size])))
        if name is not None:
            return name
    return None
