"""Validates adapter-protocol lines against harness/schema/adapter-protocol.schema.json with the
jsonschema package (Debian: python3-jsonschema), a validator written by nobody here: the kits'
tests run what their adapters wrote through it, so a kit whose own validator drifted from the
schema is caught.

    python3 validate_lines.py < lines     exit 0 all valid, 1 some not (each printed), 77 when
                                          jsonschema is not installed (the callers skip)
"""
import json
import sys
from pathlib import Path

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "schema" / "adapter-protocol.schema.json"
MISSING = ("the jsonschema package is not installed (Debian: apt-get install python3-jsonschema; "
           "tools/setup.sh installs it): the kit's output is not checked by an independent "
           "validator")


def validator():
    """A Draft 2020-12 validator of the protocol's schema, or None without jsonschema."""
    try:
        import jsonschema
    except ImportError:
        return None
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(check, events):
    """One text per invalid event: the event and each of its errors with their paths."""
    out = []
    for event in events:
        errors = sorted(check.iter_errors(event), key=lambda e: list(e.absolute_path))
        if errors:
            out.append(json.dumps(event) + ": " + "; ".join(
                f"at {'.'.join(map(str, e.absolute_path)) or '(line)'}: {e.message}"
                for e in errors))
    return out


def main():
    check = validator()
    if check is None:
        print(MISSING, file=sys.stderr)
        return 77
    events = [json.loads(line) for line in sys.stdin if line.strip()]
    found = problems(check, events)
    for problem in found:
        print(problem)
    print(f"{len(events)} lines, {len(found)} invalid", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
