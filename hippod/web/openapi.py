"""The OpenAPI document `/openapi.json` serves, made from the route tables and the wire structs, so
it says what the routes do (schemathesis fuzzes the API against it in the test suite)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import msgspec

from hippod import __version__
from hippod.web import wire
from hippod.web.routing import ID, Op

_CONVERTOR = re.compile(r"\{(\w+):int\}")
_PATH_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
_REF = "#/components/schemas/{name}"


def _path_params(path: str) -> list[dict[str, Any]]:
    params = []
    for name in _PATH_PARAM.findall(path):
        if f"{{{name}:int}}" in path:
            schema: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
        else:
            schema = {"type": "string", "pattern": ID.pattern}
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    return params


def _required(kind: type) -> bool:
    """Whether a body struct has a field without a default (then the body itself is required)."""
    fields = (
        msgspec.structs.fields(kind) if isinstance(kind, type) and issubclass(kind, msgspec.Struct) else ()
    )
    return any(f.required for f in fields)


def _json(schema: Any) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def document(ops: Iterable[Op], unsupported: Iterable[str]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of these routes."""
    ops = list(ops)
    types: list[Any] = [wire.Error]
    for op in ops:
        if op.body is not None:
            types.append(op.body)
        if op.ok[1] is not None:
            types.append(op.ok[1])
    schemas, components = msgspec.json.schema_components(types, ref_template=_REF)
    schema_of = dict(zip(map(repr, types), schemas, strict=True))
    error = {"description": "the error, in hippod's one shape", "content": _json(schema_of[repr(wire.Error)])}
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        path = _CONVERTOR.sub(r"{\1}", op.path)
        operation: dict[str, Any] = {
            "summary": op.summary,
            "operationId": op.method.lower() + re.sub(r"[^A-Za-z0-9]+", "_", path).rstrip("_"),
            "parameters": _path_params(op.path)
            + [
                {
                    "name": p.name,
                    "in": "query",
                    "required": p.required,
                    "schema": p.schema,
                    "description": p.description,
                }
                for p in op.query
            ],
            "responses": {"default": error},
        }
        status, shape = op.ok
        ok: dict[str, Any] = {"description": "done"}
        if shape is not None:
            ok["content"] = _json(schema_of[repr(shape)])
        operation["responses"][str(status)] = ok
        if op.body is not None:
            operation["requestBody"] = {
                "required": _required(op.body),
                "content": _json(schema_of[repr(op.body)]),
            }
        elif op.raw_body:
            operation["requestBody"] = {"required": True, "content": _json({"type": "object"})}
        if op.role is None:
            operation["security"] = []
        paths.setdefault(path, {})[op.method.lower()] = operation
    for family in unsupported:
        gone = {"501": error, "default": error}
        for path in (f"/v1/{family}", f"/v1/{family}/{{rest}}"):
            params = [{"name": "rest", "in": "path", "required": True, "schema": {"type": "string"}}]
            paths[path] = {
                method: {
                    "summary": "not available in hippod (501)",
                    "operationId": f"{method}_{family.replace('-', '_')}{'_rest' if 'rest' in path else ''}",
                    "parameters": params if "rest" in path else [],
                    "responses": gone,
                }
                for method in ("get", "post")
            }
    return {
        "openapi": "3.1.0",
        "info": {"title": "hippod", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        # A key, or none over loopback (the local user).
        "security": [{}, {"bearer": []}],
    }
