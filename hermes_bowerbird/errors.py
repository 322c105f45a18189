"""Leaf module: the one exception tree of the project; edges translate these into messages."""

from __future__ import annotations


class BowerbirdError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(BowerbirdError):
    """A configuration value is missing, malformed or out of range."""


class DatabaseError(BowerbirdError):
    """The database could not be opened, migrated or used."""


class ServerUnavailableError(DatabaseError):
    """The database server could not be reached, or the connection to it was lost (worth trying again)."""


class ReadOnlyStoreError(DatabaseError):
    """A write was asked of a store opened read-only; the message names why it cannot be written."""


class MigrationError(DatabaseError):
    """A migration file is malformed, duplicated or failed to apply."""


class SchemaTooNewError(MigrationError):
    """The database was written by a newer version of bowerbird than this one."""


class NotFoundError(BowerbirdError):
    """A memory, edge or other record with the given id does not exist in the visible scope."""


class InvalidInputError(BowerbirdError):
    """Input from a user, a tool call or a file is malformed; the message says where."""


class AmbiguousUserError(InvalidInputError):
    """A user id given without its platform is held on several platforms; `choices` are the PLATFORM:ID forms."""

    def __init__(self, message: str, *, choices: list[str]) -> None:
        super().__init__(message)
        self.choices = choices


class EmbeddingError(BowerbirdError):
    """The embedding model could not be loaded or failed to embed."""


class LLMError(BowerbirdError):
    """A language-model call failed, timed out or returned something unusable."""


class LLMBudgetExceeded(LLMError):
    """The per-day LLM call budget is spent; callers fall back to heuristics."""


class HostError(BowerbirdError):
    """Installing into or talking to the Hermes host failed."""
