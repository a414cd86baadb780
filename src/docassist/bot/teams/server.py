"""The Teams endpoint: aiohttp `POST /api/messages` (JWT-checked by the SDK unless anonymous
mode was asked for explicitly), a route that `mount` adds to any aiohttp application
(`docassist serve` mounts it beside Slack; `make_app` serves it alone, with `GET /healthz`).
The handler hands the activity to the SDK's `CloudAdapter`, which runs the agent
application.

Before that, after the JWT check, the body is checked: sent within the read timeout (else
408), UTF-8 JSON, an Activity the SDK can read, and for a message the fields a reply needs
(id, conversation, sender, serviceUrl) — else 400, nothing run. A lone surrogate escape
becomes U+FFFD (it could not be stored). An activity not stored within the ack deadline is
answered 503, so the channel retries."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import jwt
from aiohttp import web
from aiohttp.typedefs import Handler
from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import jwt_authorization_decorator
from microsoft_agents.hosting.core import (
    AgentAuthConfiguration,
    AnonymousTokenProvider,
    ConnectionManager,
)
from microsoft_agents.hosting.core.authorization import AuthTypes, Connections

from docassist.bot.hygiene import MalformedRequest, json_without_lone_surrogates
from docassist.bot.teams.app import TeamsAdapter
from docassist.bot.web import (
    HEALTH_PATH,
    AppServer,
    BodyRefused,
    new_application,
    read_body,
    refusal,
    serve,
)
from docassist.core.errors import AckDeadlineError
from docassist.core.limits import HTTP_READ_TIMEOUT_SECONDS

logger = logging.getLogger(__name__)

MESSAGES_PATH: Final = "/api/messages"
SERVICE_CONNECTION: Final = "SERVICE_CONNECTION"
"""The SDK's name for the connection used to validate and send."""
ANONYMOUS_WARNING: Final = (
    "WARNING: the Teams endpoint runs WITHOUT authentication (DOCASSIST_TEAMS_ANONYMOUS=true). "
    "Anyone who can reach it can post as any user and make it call any serviceUrl. "
    "Use it only for local testing.")
ANONYMOUS_NOISE_LOGGER: Final = "microsoft_agents.hosting.core.connector.client.user_token_client"


@dataclass(frozen=True)
class TeamsCredentials:
    """The bot's Entra app registration; the secret comes from the environment only."""

    app_id: str
    tenant_id: str
    secret: str


def connections_for(credentials: TeamsCredentials | None) -> Connections:
    """MSAL-backed connections for production; None means anonymous mode."""
    if credentials is None:
        anonymous = AgentAuthConfiguration(anonymous_allowed=True)
        return ConnectionManager(provider_factory=lambda _config: AnonymousTokenProvider(),
                                 connections_configurations={SERVICE_CONNECTION: anonymous})
    config = AgentAuthConfiguration(
        auth_type=AuthTypes.client_secret, client_id=credentials.app_id,
        tenant_id=credentials.tenant_id, client_secret=credentials.secret)
    return MsalConnectionManager(connections_configurations={SERVICE_CONNECTION: config})


def activity_body(raw: bytes) -> dict[str, Any]:
    """The activity as the SDK will read it, or MalformedRequest saying what is wrong."""
    try:
        text = raw.decode("utf-8")
        body = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise MalformedRequest("body is not UTF-8 JSON") from None
    if not isinstance(body, dict):
        raise MalformedRequest("body is not a JSON object")
    checked: dict[str, Any] = json_without_lone_surrogates(text, body)
    try:
        activity = Activity.model_validate(checked)
    except ValueError as error:
        raise MalformedRequest(f"not an activity: {error}".splitlines()[0]) from None
    if not activity.type or activity.conversation is None or not activity.conversation.id:
        raise MalformedRequest("activity without a type or conversation")
    if activity.type == ActivityTypes.message and not (
            activity.id and activity.service_url and activity.from_property is not None
            and activity.from_property.id):
        raise MalformedRequest("message without an id, serviceUrl or sender")
    return checked


class _CheckedRequest:
    """The request as the SDK reads it (its HttpRequestProtocol), with the checked body."""

    def __init__(self, request: web.Request, body: dict[str, Any]) -> None:
        self._request = request
        self._body = body

    @property
    def method(self) -> str:
        return self._request.method

    @property
    def headers(self) -> Mapping[str, str]:
        return self._request.headers

    async def json(self) -> dict[str, Any]:
        return self._body

    def get_claims_identity(self) -> Any:
        return self._request.get("claims_identity")

    def get_path_param(self, name: str) -> str:
        return self._request.match_info[name]


def mount(app: web.Application, adapter: TeamsAdapter, connections: Connections,
          read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> None:
    """Add POST /api/messages to `app` (any aiohttp application; one per Teams bot)."""
    async def process(request: web.Request) -> web.StreamResponse:
        try:
            body = activity_body(await read_body(request, read_timeout))
        except BodyRefused as problem:
            return refusal(problem)
        except MalformedRequest as problem:
            logger.warning("Teams request refused (400): %s", problem)
            return web.Response(status=400, text="malformed activity")
        try:
            response = await adapter.cloud.process_request(_CheckedRequest(request, body),
                                                           adapter.agent)
        except AckDeadlineError:  # logged where it happened
            return web.Response(status=503, text="busy, please retry")
        if response.body is not None:
            return web.json_response(response.body, status=response.status_code,
                                     headers=response.headers)
        return web.Response(status=response.status_code, headers=response.headers,
                            content_type=response.content_type)

    # The SDK's check: a valid Bot Framework / Entra JWT, or none at all in anonymous mode.
    checked = cast(Handler, jwt_authorization_decorator(process))  # type: ignore[no-untyped-call]

    async def messages(request: web.Request) -> web.StreamResponse:
        if not _names_its_key(request.headers.get("Authorization")):
            logger.warning("Teams request refused (401): a token without a key id")
            return web.json_response({"error": "Invalid token or authentication failed."},
                                     status=401)
        return await checked(request)

    async def on_startup(_app: web.Application) -> None:
        resumed = adapter.start(asyncio.get_running_loop())
        if resumed:
            logger.warning("resumed %d unfinished Teams event(s)", resumed)

    # Read by the SDK's JWT check: the audience (app id) and tenant tokens must match.
    app["agent_configuration"] = connections.get_default_connection_configuration()
    app.router.add_post(MESSAGES_PATH, messages)
    app.on_startup.append(on_startup)


def _names_its_key(authorization: str | None) -> bool:
    """False for a bearer JWT whose header has no `kid`: the SDK looks the key up by it and
    raised KeyError (a 500). Anything else is the SDK's to judge (401 for garbage)."""
    if authorization is None or not authorization.lower().startswith("bearer "):
        return True
    try:
        header = jwt.get_unverified_header(authorization.split(maxsplit=1)[1].strip())
    except (jwt.PyJWTError, IndexError):
        return True
    return isinstance(header.get("kid"), str) and bool(header["kid"])


def make_app(adapter: TeamsAdapter, connections: Connections,
             read_timeout: float = HTTP_READ_TIMEOUT_SECONDS) -> web.Application:
    """POST /api/messages and GET /healthz alone."""
    app = new_application()
    mount(app, adapter, connections, read_timeout)
    return app


TeamsServer = AppServer
"""The endpoint on its own event loop in a background thread (its name so far)."""
__all__ = ["HEALTH_PATH", "MESSAGES_PATH", "TeamsServer", "make_app", "mount", "serve"]
