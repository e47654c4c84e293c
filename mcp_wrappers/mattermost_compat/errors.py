"""Mattermost's error body: {id, message, detailed_error, request_id, status_code}."""

from __future__ import annotations


class ApiError(Exception):
    def __init__(self, status: int, error_id: str, message: str, detail: str = ""):
        super().__init__(message)
        self.status, self.error_id, self.message, self.detail = status, error_id, message, detail

    def body(self, request_id: str) -> dict:
        return {
            "id": self.error_id,
            "message": self.message,
            "detailed_error": self.detail,
            "request_id": request_id,
            "status_code": self.status,
        }


def bad_param(name: str, where: str = "body") -> ApiError:
    if where == "url":
        return ApiError(
            400,
            "api.context.invalid_url_param.app_error",
            f"Invalid or missing {name} parameter in request URL.",
        )
    return ApiError(
        400, "api.context.invalid_body_param.app_error", f"Invalid or missing {name} in request body."
    )


def not_found(kind: str, detail: str = "") -> ApiError:
    return ApiError(404, f"app.{kind}.get.app_error", f"Unable to find the existing {kind}.", detail)


def forbidden(permission: str) -> ApiError:
    return ApiError(
        403,
        "api.context.permissions.app_error",
        "You do not have the appropriate permissions.",
        f"userId has no {permission} permission",
    )


def unauthorized() -> ApiError:
    return ApiError(
        401, "api.context.session_expired.app_error", "Invalid or expired session, please login again."
    )
