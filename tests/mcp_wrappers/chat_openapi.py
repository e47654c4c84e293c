"""The official Mattermost API v4 OpenAPI fragments (read from ../shared, never copied into the repo),
assembled as upstream does, with a validator for one response."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

SPEC_DIR = Path(
    os.environ.get(
        "EGYM_MATTERMOST_OPENAPI", Path(__file__).resolve().parents[3] / "shared" / "mattermost-api-v4"
    )
)
PATH_FILES = ("users", "teams", "channels", "posts", "reactions", "files", "status")
SPEC_URI = "urn:mattermost-api-v4"


@cache
def spec() -> dict[str, Any]:
    """introduction.yaml + paths files + definitions.yaml, concatenated (see SOURCE.md there)."""
    if not (SPEC_DIR / "introduction.yaml").is_file():
        raise FileNotFoundError(
            f"Mattermost OpenAPI fragments not found in {SPEC_DIR} "
            "(set EGYM_MATTERMOST_OPENAPI to the folder)"
        )
    parts = ["introduction", *PATH_FILES, "definitions"]
    text = "".join((SPEC_DIR / f"{name}.yaml").read_text() for name in parts)
    document = yaml.safe_load(text)
    schemas = document["components"]["schemas"]
    for unresolved in ("ChannelBanner", "PostInfo"):  # referenced upstream, not defined: free-form
        schemas.setdefault(unresolved, {"type": "object"})
    return document


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def response_schema_ref(method: str, route: str, status: int) -> str | None:
    """A $ref to the JSON schema documented for this response; KeyError when the status is undocumented."""
    operation = spec()["paths"][route][method]
    response = operation["responses"][str(status)]
    parts = ["paths", route, method, "responses", str(status)]
    if "$ref" in response:
        parts = response["$ref"].removeprefix("#/").split("/")
        response = spec()["components"]["responses"][parts[-1]]
    if "application/json" not in response.get("content", {}):
        return None
    return f"{SPEC_URI}#/" + _pointer(*parts, "content", "application/json", "schema")


@cache
def _registry() -> Registry:
    return Registry().with_resource(SPEC_URI, Resource(contents=spec(), specification=DRAFT4))


def validate(method: str, route: str, status: int, body: Any) -> list[str]:
    """Schema violations of one response (empty list when it conforms)."""
    ref = response_schema_ref(method, route, status)
    if ref is None:
        return []
    validator = OAS30Validator({"$ref": ref}, registry=_registry())
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(body)
    ]
