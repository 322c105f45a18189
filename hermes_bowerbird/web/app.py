"""The inspector's web app: the engine it shows, its routes, templates and error pages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from .. import render
from ..errors import InvalidInputError, NotFoundError
from ..scopes import profile_scope as shared_scope
from .security import ALLOWED_HOSTS, TokenGate

if TYPE_CHECKING:
    from ..engine import Bowerbird

HERE = Path(__file__).parent
ACTOR = "inspector"


@dataclass(frozen=True)
class Inspector:
    """What one running inspector serves: an engine, the access token and the scopes it may show and change."""

    engine: Bowerbird
    token: str
    # None: every scope in the file (the file's owner is looking)
    fixed_scopes: tuple[str, ...] | None = None
    profile_scope: str = shared_scope(None)

    def scopes(self) -> tuple[str, ...]:
        """The scopes pages may show and writes may touch."""
        if self.fixed_scopes is not None:
            return self.fixed_scopes
        return tuple(self.engine.inspect.scopes()) or (self.profile_scope,)

    def visible_for(self, scope: str) -> tuple[str, ...]:
        """What a session writing to `scope` reads: a gateway user's own scope plus the shared profile scope."""
        return (scope, self.profile_scope) if scope.startswith("user:") else (scope,)


def inspector_of(request: Request) -> Inspector:
    inspector: Inspector = request.app.state.inspector
    return inspector


def page(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    """Render a template with the values every page uses (the token for forms, the database path)."""
    inspector = inspector_of(request)
    context.setdefault("section", "")
    context.update(
        token=inspector.token, db_path=inspector.engine.config.db_path, now=inspector.engine.clock()
    )
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(request, name, context, status_code=status_code)


def templates() -> Jinja2Templates:
    """Jinja2 with autoescape on for every template: memory text is untrusted and never marked safe."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = render.when
    env.filters["shorten"] = render.shorten
    return Jinja2Templates(env=env)


async def not_found(request: Request, exc: Exception) -> Response:
    return page(request, "error.html", 404, title="Not found", message=str(exc))


async def invalid(request: Request, exc: Exception) -> Response:
    return page(request, "error.html", 400, title="Cannot do that", message=str(exc))


def home(request: Request) -> Response:
    return RedirectResponse("/memories", status_code=303)


def create_app(inspector: Inspector) -> Starlette:
    """The ASGI app; serve it on 127.0.0.1 only (the host check refuses any other name)."""
    from . import actions, views

    routes: list[BaseRoute] = [
        Route("/", home),
        Route("/memories", views.memories),
        Route("/memories/{memory_id:int}", views.memory),
        Route("/bulletin", views.bulletin),
        Route("/status", views.status),
        *actions.routes(),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=list(ALLOWED_HOSTS)),
        Middleware(TokenGate, token=inspector.token),
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={NotFoundError: not_found, InvalidInputError: invalid},
    )
    app.state.inspector = inspector
    app.state.templates = templates()
    return app
