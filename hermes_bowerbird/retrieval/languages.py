"""Questions asked in another language than English: told apart by their function words, which are left out of
their keywords.

The local model (all-MiniLM-L6-v2) was trained on English. Two texts in another language share its word pieces and
little of its meaning, so their cosine is high whatever they say ("¿Cuál es la capital de Francia?" stands at 0.54
from "Mi hija se llama Lucía"), and the prefetch gate would inject a memory because it is in Spanish. Such a
question is judged by its keywords alone, and its own language's little words ("la", "ist", "mon") are no keywords:
in a mostly English store they are rare, and so would weigh as if they named the answer.
"""

from __future__ import annotations

from collections.abc import Sequence

# Function words of the languages the user is likeliest to switch to (lowercase, as `text.search_words` gives them).
# Spanish, German, French, Italian, Portuguese, Dutch.
FOREIGN_STOP_WORDS = frozenset(
    """
el la los las es son soy eres somos estoy esta está están mi mis tu tus su sus nuestro nuestra nuestros nuestras
qué que quién quien quiénes cómo como cuál cual cuáles cuándo cuando dónde donde cuánto cuánta cuántos cuántas por
porqué y o de del en un una unos unas para con sin se lo le les al yo nosotros ella ellos tengo tiene tienen hay
muy pero también ya me te nos hace fue era
der die das den dem des ist sind bin bist war ich du er sie es wir ihr mein meine meinen meinem meiner dein deine
unser unsere wer wie was wann wo welche welcher welches warum und oder nicht kein keine ein eine einen einem einer
mit für auf bei von zu zum zur im am um aus nach über habe hast hat haben auch noch schon sehr aber heißt
le la les est sont suis es je tu il elle nous vous ils elles mon ma mes ton ta tes son sa ses notre nos votre vos
leur leurs quel quelle quels quelles qui que quoi où quand comment pourquoi combien et ou un une des du de au aux
avec pour dans sur pas ne ce cette ces ai as avons avez ont très mais aussi
il lo la gli le è sono sei siamo io lui lei noi voi loro mio mia miei mie tuo tua nostro nostra chi che cosa come
quando dove quale quali perché quanto quanti e o un uno una di da del della con per su non ho hai ha abbiamo anche
o os as é são sou eu ele ela nós eles elas meu minha meus minhas teu tua nosso nossa quem qual quais onde quanto
quantos porque um uma uns umas do da dos das em no na nos nas com para por não tenho tem temos também
de het een is zijn ik jij hij zij wij mijn jouw onze ons wie wat wanneer waar hoe welke waarom en niet geen met
voor op van naar heb hebt heeft hebben ook maar
""".split()  # noqa: SIM905
)
# ...of which these are English words too ("die", "was", "van", "nas"): they say nothing of a question's language
_ENGLISH_TOO = frozenset(
    """
a as an am also are at be bin by do die for had has hat have he her hi his i in is it me no nor of on or our over
so the to us was we will war man son sole come fine ha hay nos con des mis van op hoe os eu nas dos das chi ho lei
mia ma ta ton sin era lo um aus tem mais ont sei ei
""".split()  # noqa: SIM905
)
_TELLING = FOREIGN_STOP_WORDS - _ENGLISH_TOO
# the question words that alone tell a short question's language: "¿Dónde trabajo?", "Wann Badminton?"
_ASKING = frozenset(
    """
qué cómo cuál cuándo dónde cuánto cuántos cuántas quién wer wie wann wo welche warum quel quelle quels quelles où
quand comment pourquoi combien chi cosa dove quale perché quem onde quais wie wat wanneer waar welke waarom
""".split()  # noqa: SIM905
)


def other_language(words: Sequence[str], english: frozenset[str]) -> bool:
    """Whether a question of these words (lowercase) is in another language than English: more of its words are
    another language's function words than English ones (`english`), and at least two, or a question word of its
    own and no English function word at all ("¿Dónde trabajo?")."""
    foreign = [w for w in words if w in _TELLING and w not in english]
    native = sum(w in english for w in words)
    return len(foreign) > native and (len(foreign) >= 2 or (native == 0 and foreign[0] in _ASKING))
