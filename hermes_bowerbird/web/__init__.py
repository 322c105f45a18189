"""The memory inspector: a small local web page to browse, search and fix what memory holds (`bowerbird serve`)."""

from .app import Inspector, create_app
from .server import serve

__all__ = ["Inspector", "create_app", "serve"]
