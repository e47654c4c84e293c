"""System endpoints: health check and the client configuration integrations read at start-up."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_wrappers import __version__
from mcp_wrappers.mattermost_compat.errors import ApiError
from mcp_wrappers.mattermost_compat.web import MAX_PAYLOAD, Ctx, endpoint

API_LEVEL = "11.4.0"  # the Mattermost release whose API v4 behaviour this service follows
# Real Mattermost sends `<version>.<build number>.<config hash>.<enterprise>` on every answer.
VERSION_ID = f"{API_LEVEL}.egym-compat-{__version__}"


async def ping(request: Request) -> JSONResponse:
    """Health check (same path as Mattermost's), used by the chat app's image/start to know the service answers."""
    return JSONResponse({"status": "OK"})


def client_config() -> dict[str, str]:
    """The `format=old` client configuration: Mattermost's keys (all string values), for this service."""
    return {
        "Version": API_LEVEL,
        "BuildNumber": f"egym-compat-{__version__}",
        "BuildDate": "",
        "BuildHash": "",
        "BuildEnterpriseReady": "false",
        "SiteName": "Mattermost",
        "SiteURL": "http://127.0.0.1:8065",
        "DiagnosticsEnabled": "false",
        "EnableUserAccessTokens": "true",
        "EnableOpenServer": "false",
        "EnableUserCreation": "true",
        "EnableSignInWithEmail": "true",
        "EnableSignInWithUsername": "true",
        "EnableFileAttachments": "true",
        "EnablePublicLink": "false",
        "EnableCustomEmoji": "false",
        "EnableUserStatuses": "true",
        "CollapsedThreads": "always_on",
        "ExperimentalEnablePostMetadata": "true",
        "MaxFileSize": str(50 * 1024 * 1024),
        "MaxPostSize": "16383",
        "MaximumPayloadSizeBytes": str(MAX_PAYLOAD),
        "ShowEmailAddress": "true",
        "ShowFullName": "true",
        "TeammateNameDisplay": "username",
        "WebsocketURL": "",
        "WebsocketPort": "80",
        "WebsocketSecurePort": "443",
    }


async def config_client(ctx: Ctx) -> tuple[int, Any]:
    if ctx.query("format") != "old":
        raise ApiError(
            501,
            "api.config.client.old_format.app_error",
            "New format for the client configuration is not supported yet. Please specify format=old in the "
            "query string.",
        )
    return 200, client_config()


class VersionHeader:
    """ASGI middleware: `X-Version-Id` on every answer, errors included (as Mattermost does)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_version(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-version-id", VERSION_ID.encode())]
            await send(message)

        return await self.app(scope, receive, send_with_version)


ROUTES = [
    Route("/api/v4/system/ping", ping, methods=["GET"]),
    Route("/api/v4/config/client", endpoint(config_client, auth=False), methods=["GET"]),
]
