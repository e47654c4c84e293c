"""The rubric JSON Schema, generated from the models in grader.rubric.

    python -m grader.rubric_schema     # rewrites grader/schema/rubric.schema.json

The file is what editors read (a rubric's `"$schema"`) and what grader.loader checks
files against, so it is committed; tests/grader/test_rubric_schema.py fails when it
differs from what the models generate. pydantic's schema is adjusted for a file
format in three ways (`FileSchema`): an optional key is absent rather than null, a
tagged union picks its branch by its tag (so an error names that branch's missing or
unknown key, not every branch's), and fields carry no generated titles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

from grader.rubric import Rubric

PATH = Path(__file__).parent / "schema" / "rubric.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


class FileSchema(GenerateJsonSchema):
    """pydantic's JSON Schema generator, for files written by hand."""

    def nullable_schema(self, schema: Any) -> JsonSchemaValue:
        # `x: T | None = None` means the key may be left out, not that it may be null.
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: Any) -> JsonSchemaValue:
        if "default" in schema and schema["default"] is None:  # nothing for an editor to fill in
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def tagged_union_schema(self, schema: Any) -> JsonSchemaValue:
        """`{"oneOf": [...], "discriminator": ...}` as the tag's enum and one if/then per tag value."""
        union = super().tagged_union_schema(schema)
        tag = union.get("discriminator", {}).get("propertyName")
        if tag is None:
            return union
        branches = union["discriminator"]["mapping"]
        return {
            "type": "object",
            "required": [tag],
            "properties": {tag: {"enum": list(branches)}},
            "allOf": [
                {
                    "if": {"properties": {tag: {"const": value}}, "required": [tag]},
                    "then": ref if isinstance(ref, dict) else {"$ref": ref},
                }
                for value, ref in branches.items()
            ],
        }


def rubric_json_schema() -> dict[str, Any]:
    """The schema of a rubric file, from grader.rubric's models."""
    schema = Rubric.model_json_schema(schema_generator=FileSchema)
    return {
        "$schema": DIALECT,
        "$id": "https://enterprise-gym.dev/schema/rubric.schema.json",
        **schema,
        "title": "enterprise-gym rubric",
    }


def render() -> str:
    """The schema file's text (pydantic orders keys, properties in the models' order)."""
    return json.dumps(rubric_json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    PATH.write_text(render())
    print(f"wrote {PATH}")
