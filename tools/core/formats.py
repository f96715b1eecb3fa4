"""The tool specs in the shapes function-calling APIs take: OpenAI, Anthropic, MCP.

A spec is what ``Tool.spec()`` builds from the registry — ``{"name", "description",
"parameters"}`` with a JSON Schema — and what ``Workspace.specs`` / ``AgentClient.specs``
return; every format here is derived from it, so a kernel's specs convert the same way.

- ``openai``: Chat Completions ``tools`` entries, ``{"type": "function", "function": {name,
  description, parameters, "strict": true}}``, the parameters rewritten to OpenAI's strict rules
  (Structured Outputs, "Supported schemas"): every property listed in ``required``, an optional
  one made nullable (``null`` added to its type, enum or anyOf); ``additionalProperties: false``
  on every object; only the supported keywords kept (``openai_strict_schema``). A ``null`` the
  model sends for an optional parameter means "absent": ``absent_nulls`` drops it (the
  validator does too, for top-level arguments).
- ``anthropic``: Messages API ``tools`` entries, ``{"name", "description", "input_schema"}``.
- ``mcp``: ``tools/list`` entries, ``{"name", "description", "inputSchema"}`` (plus ``title``
  and ``annotations`` when a spec carries them).

A tool result goes back in the same three shapes (``result_in_format``), its images
(``ToolResult.images``, ``look``) as each API's image block — base64 only inside that block,
never in the text: ``openai`` a ``tool`` message then a ``user`` message of ``image_url`` parts
(Chat Completions takes images only in user messages); ``anthropic`` one ``tool_result`` block
whose content holds ``image`` blocks; ``mcp`` a ``CallToolResult``'s content, ``image`` blocks.
For a model that does not take images, ``images=False`` leaves them out and the text says why
(``why_not``): the result's text already describes each image.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from kli.tools.core.result import ImagePart, ToolResult

FORMATS = ("openai", "anthropic", "mcp")

# OpenAI strict mode: the keywords it supports (everything else is dropped). Structural ones,
# then per type: string pattern/format; number multipleOf/maximum/exclusiveMaximum/minimum/
# exclusiveMinimum; array minItems/maxItems.
OPENAI_KEYWORDS = frozenset({
    "type", "description", "properties", "required", "additionalProperties", "items", "anyOf",
    "enum", "const", "$ref", "$defs", "definitions",
    "pattern", "format",
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "minItems", "maxItems",
})
# A nested schema's keywords whose values are schemas (or maps / lists of them).
_SCHEMA_MAPS = ("properties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf",)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` also accepting ``null``."""
    out = dict(schema)
    kind = out.get("type")
    if "anyOf" in out:
        if not any(branch.get("type") == "null" for branch in out["anyOf"]):
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    elif "const" in out or kind is None:
        description = out.pop("description", None)
        out = {"anyOf": [out, {"type": "null"}]}
        if description is not None:
            out["description"] = description
    else:
        if isinstance(kind, str) and kind != "null":
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def openai_strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` rewritten to OpenAI's strict rules (see the module docstring); a new object."""
    out = {k: copy.deepcopy(v) for k, v in schema.items() if k in OPENAI_KEYWORDS}
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: openai_strict_schema(sub) for name, sub in out[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [openai_strict_schema(sub) for sub in out[key]]
    if isinstance(out.get("items"), dict):
        out["items"] = openai_strict_schema(out["items"])
    kind = out.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in out:
        props: dict[str, Any] = out.setdefault("properties", {})
        required = set(out.get("required", []))
        for name, sub in props.items():
            if name not in required:
                props[name] = _nullable(sub)
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


def openai_tool(spec: dict[str, Any]) -> dict[str, Any]:
    params = spec.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": {
        "name": spec["name"], "description": spec.get("description", ""),
        "parameters": openai_strict_schema(params), "strict": True}}


def anthropic_tool(spec: dict[str, Any]) -> dict[str, Any]:
    return {"name": spec["name"], "description": spec.get("description", ""),
            "input_schema": copy.deepcopy(spec.get("parameters") or {"type": "object"})}


def mcp_tool(spec: dict[str, Any]) -> dict[str, Any]:
    out = {"name": spec["name"], "description": spec.get("description", ""),
           "inputSchema": copy.deepcopy(spec.get("parameters") or {"type": "object"})}
    for extra in ("title", "annotations"):
        if extra in spec:
            out[extra] = copy.deepcopy(spec[extra])
    return out


_CONVERTERS = {"openai": openai_tool, "anthropic": anthropic_tool, "mcp": mcp_tool}


def in_format(specs: list[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """``specs`` as format ``fmt`` (one of ``FORMATS``) wants its tool list; ValueError else."""
    try:
        convert = _CONVERTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}") from None
    return [convert(spec) for spec in specs]


def absent_nulls(args: Any, schema: dict[str, Any]) -> Any:
    """Arguments as the tool expects them: a ``null`` given for a property the original
    ``schema`` does not require is dropped ("absent", so the default applies), at every level
    the schema describes. Anything that is not a dict is returned as it is."""
    if not isinstance(args, dict):
        return args
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, value in args.items():
        if value is None and name not in required:
            continue
        out[name] = _absent_nulls_in(value, props.get(name, {}))
    return out


def _absent_nulls_in(value: Any, schema: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        if "properties" in schema:
            return absent_nulls(value, schema)
        for branch in schema.get("anyOf", []):
            if "properties" in branch:
                return absent_nulls(value, branch)
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_absent_nulls_in(v, schema["items"]) for v in value]
    return value


# -- tool results -----------------------------------------------------------------------------
IMAGES_FOLLOW = "The {count} image(s) of the {tool} result above ({labels}):"
IMAGES_LEFT_OUT = ("[{count} image(s) not shown: {why}. The text above describes each "
                   "image.]")


def image_block(part: ImagePart, fmt: str) -> dict[str, Any]:
    """``part`` as format ``fmt``'s image content block (base64 inside the block)."""
    data = base64.b64encode(part.data).decode()
    if fmt == "openai":
        return {"type": "image_url", "image_url": {"url": f"data:{part.mime};base64,{data}"}}
    if fmt == "anthropic":
        return {"type": "image", "source": {"type": "base64", "media_type": part.mime,
                                            "data": data}}
    if fmt == "mcp":
        return {"type": "image", "data": data, "mimeType": part.mime}
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def result_text(result: ToolResult, *, text: str | None = None, images: bool = True,
                why_not: str = "") -> str:
    """The text a model reads of ``result`` (``text`` replaces ``result.text``): with the note
    ``IMAGES_LEFT_OUT`` when it has images and they are not sent."""
    body = result.text if text is None else text
    if result.images and not images:
        why = why_not or "this model does not take images"
        body += "\n" + IMAGES_LEFT_OUT.format(count=len(result.images), why=why)
    return body


def result_in_format(result: ToolResult, fmt: str, *, call_id: str = "", tool: str = "tool",
                     text: str | None = None, images: bool = True,
                     why_not: str = "") -> list[dict[str, Any]]:
    """``result`` as format ``fmt`` hands a tool result to a model (module docstring):

    - ``openai``: the messages to append — ``{"role": "tool", "tool_call_id": call_id,
      "content": text}``, then, when it has images to send, one ``user`` message with a text
      part naming them and an ``image_url`` part each;
    - ``anthropic``: the blocks of the next user message — one ``tool_result`` for
      ``call_id`` (``is_error`` when not ok), its content the text and an ``image`` block each;
    - ``mcp``: a ``CallToolResult``'s ``content`` — a ``text`` block, an ``image`` block each.

    ``text`` replaces ``result.text``; ``images=False`` leaves the images out and says why
    (``why_not``) in the text. ValueError for an unknown format."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    body = result_text(result, text=text, images=images, why_not=why_not)
    parts = [image_block(p, fmt) for p in result.images] if images else []
    if fmt == "openai":
        out: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": call_id, "content": body}]
        if parts:
            labels = "; ".join(p.label or p.mime for p in result.images)
            head = IMAGES_FOLLOW.format(count=len(parts), tool=tool, labels=labels)
            out.append({"role": "user", "content": [{"type": "text", "text": head}, *parts]})
        return out
    if fmt == "anthropic":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                                 "content": [{"type": "text", "text": body}, *parts]}
        if not result.ok:
            block["is_error"] = True
        return [block]
    return [{"type": "text", "text": body}, *parts]
