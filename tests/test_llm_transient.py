"""The one rule for which remote-call failures are retried, shared by the language models and the embedders."""

from __future__ import annotations

import httpx
import openai
import pytest
from google.genai import errors as genai_errors

from hermes_bowerbird.errors import EmbeddingError, LLMError
from hermes_bowerbird.llm.transient import is_auth_failure, is_rate_limited, is_transient

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


class _Status(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"status {status}")
        self.status_code = status


class ReadTimeout(Exception):
    pass


def _http(status: int) -> httpx.Response:
    return httpx.Response(status, request=REQUEST)


def _gemini(status: int, message: str = "failed") -> genai_errors.APIError:
    return genai_errors.APIError(status, {"error": {"message": message, "status": "X"}})


TRANSIENT = [
    pytest.param(_Status(429), id="429"),
    pytest.param(_Status(408), id="408"),
    pytest.param(_Status(500), id="500"),
    pytest.param(_Status(502), id="502"),
    pytest.param(_Status(503), id="503"),
    pytest.param(_Status(504), id="504"),
    pytest.param(ReadTimeout(), id="an SDK's own timeout class"),
    pytest.param(TimeoutError(), id="TimeoutError"),
    pytest.param(ConnectionResetError(), id="ConnectionResetError"),
    pytest.param(httpx.ConnectError("refused", request=REQUEST), id="httpx.ConnectError"),
    pytest.param(httpx.ReadTimeout("slow", request=REQUEST), id="httpx.ReadTimeout"),
    pytest.param(
        httpx.RemoteProtocolError("closed", request=REQUEST), id="httpx.RemoteProtocolError"
    ),
    pytest.param(
        httpx.HTTPStatusError("busy", request=REQUEST, response=_http(503)), id="httpx 503"
    ),
    pytest.param(_gemini(429), id="Gemini 429"),
    pytest.param(genai_errors.ServerError(500, {"error": {"message": "x"}}), id="Gemini 500"),
    pytest.param(
        openai.RateLimitError("slow down", response=_http(429), body=None), id="openai 429"
    ),
    pytest.param(
        openai.InternalServerError("oops", response=_http(500), body=None), id="openai 500"
    ),
    pytest.param(openai.APIConnectionError(request=REQUEST), id="openai connection error"),
    pytest.param(openai.APITimeoutError(request=REQUEST), id="openai timeout"),
]

REFUSED = [
    pytest.param(_Status(400), id="400"),
    pytest.param(_Status(401), id="401"),
    pytest.param(_Status(403), id="403"),
    pytest.param(_Status(404), id="404"),
    pytest.param(_Status(422), id="422"),
    pytest.param(
        httpx.HTTPStatusError("bad", request=REQUEST, response=_http(400)), id="httpx 400"
    ),
    pytest.param(_gemini(400, "API key not valid"), id="Gemini 400"),
    pytest.param(_gemini(403), id="Gemini 403"),
    pytest.param(openai.AuthenticationError("no", response=_http(401), body=None), id="openai 401"),
    pytest.param(openai.BadRequestError("no", response=_http(400), body=None), id="openai 400"),
    pytest.param(ValueError("bad"), id="ValueError"),
    pytest.param(KeyError("choices"), id="KeyError"),
    pytest.param(LLMError("x"), id="LLMError"),
    pytest.param(EmbeddingError("x"), id="EmbeddingError"),
]


@pytest.mark.parametrize("exc", TRANSIENT)
def test_transient_failures_are_retried(exc: BaseException) -> None:
    assert is_transient(exc) is True


@pytest.mark.parametrize("exc", REFUSED)
def test_refused_requests_and_our_own_errors_are_not_retried(exc: BaseException) -> None:
    assert is_transient(exc) is False


@pytest.mark.parametrize(
    ("exc", "auth"),
    [
        pytest.param(_Status(401), True, id="401"),
        pytest.param(_Status(403), True, id="403"),
        pytest.param(
            _gemini(400, "API key not valid. Please pass a valid API key."),
            True,
            id="Gemini 400 naming the key",
        ),
        pytest.param(_gemini(400, "bad request"), False, id="Gemini 400 otherwise"),
        pytest.param(_Status(429), False, id="429"),
        pytest.param(TimeoutError(), False, id="timeout"),
    ],
)
def test_auth_failures_are_told_apart(exc: BaseException, auth: bool) -> None:
    assert is_auth_failure(exc) is auth


@pytest.mark.parametrize(
    ("exc", "limited"),
    [
        pytest.param(_Status(429), True, id="429"),
        pytest.param(_gemini(429), True, id="Gemini 429"),
        pytest.param(_Status(503), False, id="503"),
        pytest.param(TimeoutError(), False, id="timeout"),
    ],
)
def test_rate_limits_are_told_apart(exc: BaseException, limited: bool) -> None:
    assert is_rate_limited(exc) is limited
