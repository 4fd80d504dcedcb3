"""The adapter protocol's JSON Schema (harness/schema/adapter-protocol.schema.json, the one home of
the lines' shapes: the runner validates every line against it) and a small validator for the
keywords it uses, for the Python adapter kit (faultline_adapter.py), standard library only.

Supported: type, const, enum, minimum, maximum, minLength, properties, required,
additionalProperties, dependentRequired, items, allOf, anyOf, oneOf, if/then/else, $ref; any other
keyword is refused when the module loads, so the kit never passes what the schema forbids. An
integer is a JSON integer (not 1.0, not a bool), a number is finite. Messages say where and what,
as the runner does: `at attempt: expected an integer, got the string "1"`,
`missing required field "commitment"`, `unknown field "zz"`.
"""
import json
import math
import os
import re
import subprocess
from pathlib import Path


def _load_schema():
    """The schema, looked up where it is: FAULTLINE_PROTOCOL_SCHEMA; the kit's own folder (a kit
    copied alone into another project, with `faultline schema protocol >
    kit/adapter-protocol.schema.json`); beside the kit in the source tree (harness/schema/) and once
    installed (share/faultline/schema/); else the faultline binary that runs the adapter prints it
    (FAULTLINE_BIN, else `faultline` on PATH). Never a copy kept here: the runner's schema is the
    one home."""
    here = Path(__file__).resolve()
    files = [os.environ.get("FAULTLINE_PROTOCOL_SCHEMA"),
             here.parents[1] / "adapter-protocol.schema.json",
             here.parents[3] / "schema" / "adapter-protocol.schema.json"]
    tried = []
    for file in filter(None, files):
        try:
            with open(file, encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            tried.append(str(file))
    binary = os.environ.get("FAULTLINE_BIN", "faultline")
    try:
        return json.loads(subprocess.run([binary, "schema", "protocol"], check=True,
                                         capture_output=True, text=True).stdout)
    except (OSError, subprocess.CalledProcessError) as error:
        tried.append(f"{binary} schema protocol ({error})")
    raise RuntimeError("the adapter protocol schema was not found; tried: " + ", ".join(tried) +
                       ". Put it beside the kit: faultline schema protocol > "
                       "kit/adapter-protocol.schema.json")


SCHEMA = _load_schema()


def is_integer(v):
    """A JSON integer: an int, not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "default", "examples",
                "$defs"}
_KEYWORDS = {"type", "const", "enum", "minimum", "maximum", "minLength", "properties", "required",
             "additionalProperties", "dependentRequired", "items", "allOf", "anyOf", "oneOf", "if",
             "then", "else", "$ref"}
_MAX_DEPTH = 128
_JSON_TYPES = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": is_integer,
    "number": lambda v: is_integer(v) or (isinstance(v, float) and math.isfinite(v)),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}
_ARTICLE = {"null": "null", "boolean": "a boolean", "integer": "an integer", "number": "a number",
            "string": "a string", "array": "an array", "object": "an object"}


def _check_keywords(schema, where=""):
    if isinstance(schema, bool):
        return
    for key, value in schema.items():
        if key not in _ANNOTATIONS and key not in _KEYWORDS:
            raise ValueError(f"{where or '/'}: keyword {key!r} is not supported")
        if key in ("properties", "$defs"):
            for name, child in value.items():
                _check_keywords(child, f"{where}/{key}/{name}")
        elif key in ("allOf", "anyOf", "oneOf"):
            for i, child in enumerate(value):
                _check_keywords(child, f"{where}/{key}/{i}")
        elif key in ("items", "if", "then", "else") or (
                key == "additionalProperties" and isinstance(value, dict)):
            _check_keywords(value, f"{where}/{key}")


_check_keywords(SCHEMA)


def _resolve(ref):
    node = SCHEMA
    for token in filter(None, ref[2:].split("/")):
        node = node.get(token.replace("~1", "/").replace("~0", "~")) if isinstance(
            node, dict) else None
    return node


def _quoted(text):
    return json.dumps(text[:60] + "..." if len(text) > 60 else text)


def _shown(v):
    return _quoted(v) if isinstance(v, str) else json.dumps(v)


def _describe(v):
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, str):
        return f"the string {_quoted(v)}"
    if isinstance(v, (int, float)):
        return f"the number {v}"
    return "an array" if isinstance(v, list) else "an object"


def _same(a, b):
    """JSON equality: 1 and 1.0 are one number, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _join_path(path, key):
    if re.fullmatch(r"[A-Za-z0-9_-]{1,60}", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{_quoted(key)}]"


class _Checker:
    def __init__(self, limit):
        self.limit, self.problems = limit, []

    def full(self):
        return len(self.problems) >= self.limit

    def report(self, path, message):
        if not self.full():
            self.problems.append(f"at {path}: {message}" if path else message)

    def passes(self, schema, value, depth):
        quiet = _Checker(1)
        quiet.check(schema, value, "", depth + 1)
        return not quiet.problems

    def check(self, schema, value, path, depth):
        if self.full():
            return
        if depth > _MAX_DEPTH:
            return self.report(path, f"nests deeper than {_MAX_DEPTH} levels")
        if schema is True:
            return
        if schema is False:
            return self.report(path, "no value is allowed here")
        if not self.check_value(schema, value, path):
            return
        if "$ref" in schema:
            self.check(_resolve(schema["$ref"]), value, path, depth + 1)
        if isinstance(value, dict):
            self.check_object(schema, value, path, depth)
        if isinstance(value, list) and "items" in schema:
            for i, item in enumerate(value):
                self.check(schema["items"], item, f"{path}[{i}]", depth + 1)
        self.check_combinations(schema, value, path, depth)

    def check_value(self, schema, value, path):
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_JSON_TYPES[t](value) for t in types):
                names = [t for t in types if t != "null"] + [t for t in types if t == "null"]
                self.report(path, f"expected {' or '.join(_ARTICLE[t] for t in names)}, got "
                                  f"{_describe(value)}")
                return False
        if "const" in schema and not _same(value, schema["const"]):
            self.report(path, f"expected {_shown(schema['const'])}, got {_describe(value)}")
        if "enum" in schema and not any(_same(value, c) for c in schema["enum"]):
            what = _describe(value) if isinstance(value, (dict, list)) else _shown(value)
            self.report(path, f"{what} is not one of {', '.join(map(_shown, schema['enum']))}")
        number = _JSON_TYPES["number"](value)
        if number and "minimum" in schema and value < schema["minimum"]:
            self.report(path, f"expected at least {schema['minimum']}, got {value}")
        if number and "maximum" in schema and value > schema["maximum"]:
            self.report(path, f"expected at most {schema['maximum']}, got {value}")
        if isinstance(value, str) and len(value) < schema.get("minLength", 0):
            self.report(path, "expected a non-empty string" if schema["minLength"] == 1 else
                        f"expected at least {schema['minLength']} characters")
        return True

    def check_object(self, schema, value, path, depth):
        missing = [_quoted(f) for f in schema.get("required", []) if f not in value]
        if missing:
            self.report(path, f"missing required field{'s' if len(missing) > 1 else ''} "
                              f"{', '.join(missing)}")
        properties = schema.get("properties", {})
        for key, item in value.items():
            child = properties[key] if key in properties else schema.get("additionalProperties")
            if child is False:
                self.report(path, f"unknown field {_quoted(key)}")
            elif child is not None:
                self.check(child, item, _join_path(path, key), depth + 1)
        for field, needs in schema.get("dependentRequired", {}).items():
            for need in (n for n in needs if field in value and n not in value):
                self.report(path, f"field {_quoted(field)} goes with {_quoted(need)}, which is "
                                  "missing")

    def check_combinations(self, schema, value, path, depth):
        for each in schema.get("allOf", []):
            self.check(each, value, path, depth + 1)
        if "anyOf" in schema and not any(self.passes(s, value, depth) for s in schema["anyOf"]):
            self.report(path, f"matches none of: {self.firsts(schema['anyOf'], value, depth)}")
        if "oneOf" in schema:
            self.check_one_of(schema["oneOf"], value, path, depth)
        if "if" in schema:
            branch = schema.get("then") if self.passes(schema["if"], value, depth) else \
                schema.get("else")
            if branch is not None:
                self.check(branch, value, path, depth + 1)

    def check_one_of(self, alternatives, value, path, depth):
        passing = sum(self.passes(s, value, depth) for s in alternatives)
        if passing == 1:
            return
        # Alternatives that only require one field each say "exactly one of these fields".
        if all(list(s) == ["required"] and len(s["required"]) == 1 for s in alternatives):
            fields = [_quoted(s["required"][0]) for s in alternatives]
            self.report(path, f"needs one of the fields {' or '.join(fields)}" if passing == 0
                        else f"allows only one of the fields {' and '.join(fields)}")
        else:
            self.report(path, f"matches none of: {self.firsts(alternatives, value, depth)}"
                        if passing == 0 else
                        "matches more than one alternative; exactly one is allowed")

    def firsts(self, alternatives, value, depth):
        found = []
        for alternative in alternatives:
            quiet = _Checker(1)
            quiet.check(alternative, value, "", depth + 1)
            found += quiet.problems
        return " | ".join(found)


def schema_problems(value, pointer="#", limit=3):
    """The problems of `value` against the subschema at `pointer` ("#/$defs/adapter~1hello"; "#"
    the whole schema): at most `limit`, an empty list when it is valid."""
    schema = _resolve(pointer)
    if schema is None:
        return [f"the schema has nothing at {pointer}"]
    checker = _Checker(limit)
    checker.check(schema, value, "", 0)
    return checker.problems


def definition_of(event_type):
    """The definition of an event or line in the schema: "#/$defs/adapter~1hello"."""
    return "#/$defs/" + event_type.replace("~", "~0").replace("/", "~1")


EVENT_TYPES = SCHEMA["properties"]["type"]["enum"]
