"""The inspector's writes: edit (a new version), forget, restore and importance, each a POST carrying the token."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..errors import InvalidInputError
from .app import ACTOR, Inspector, inspector_of
from .security import TOKEN_FIELD, denied, token_matches

# (inspector, memory id, form) -> the id of the memory to show afterwards
Action = Callable[[Inspector, int, FormData], int]


def field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def edit(inspector: Inspector, memory_id: int, form: FormData) -> int:
    memory = inspector.engine.update(
        memory_id, field(form, "content"), scopes=inspector.scopes(), actor=ACTOR
    )
    return memory.id


def forget(inspector: Inspector, memory_id: int, form: FormData) -> int:
    reason = field(form, "reason").strip() or "forgotten in the inspector"
    return inspector.engine.forget(
        memory_id, scopes=inspector.scopes(), reason=reason, actor=ACTOR
    ).id


def restore(inspector: Inspector, memory_id: int, form: FormData) -> int:
    return inspector.engine.restore(
        memory_id, scopes=inspector.scopes(), reason="restored in the inspector", actor=ACTOR
    ).id


def importance(inspector: Inspector, memory_id: int, form: FormData) -> int:
    try:
        value = float(field(form, "importance"))
    except ValueError as exc:
        raise InvalidInputError("importance must be a number between 0 and 1") from exc
    return inspector.engine.set_importance(
        memory_id, value, scopes=inspector.scopes(), actor=ACTOR
    ).id


ACTIONS: dict[str, tuple[Action, str]] = {
    "edit": (edit, "edited"),
    "forget": (forget, "forgotten"),
    "restore": (restore, "restored"),
    "importance": (importance, "importance"),
}


def endpoint(action: Action, done: str) -> Callable[[Request], Awaitable[Response]]:
    """A POST handler: refuse (403) unless the form carries the token, run the action, show the memory again."""

    async def handle(request: Request) -> Response:
        form = await request.form()
        inspector = inspector_of(request)
        if not token_matches(field(form, TOKEN_FIELD) or None, inspector.token):
            return denied()
        shown = await run_in_threadpool(
            action, inspector, int(request.path_params["memory_id"]), form
        )
        return RedirectResponse(f"/memories/{shown}?done={done}", status_code=303)

    return handle


def routes() -> list[Route]:
    return [
        Route(
            f"/memories/{{memory_id:int}}/{name}",
            endpoint(action, done),
            methods=["POST"],
            name=name,
        )
        for name, (action, done) in ACTIONS.items()
    ]
