"""The kits' protocol.json and the protocol's JSON Schema must say what the reference client
says: its classification tables (reference_impl/classify.cc, stream_error_class.cc), its taxonomy
names (failure.cc), its delay sources (retry_after.cc), its dialects' paths, terminators and
stream framings (dialect.cc, call_request.cc, assembler.cc; SSE, Ollama's NDJSON or Bedrock's event
stream, and the untyped in-stream error rule of stream_error_class.cc) and the finish reasons it
calls a refusal (assembler.cc) are read from the C++ sources and compared, so that a change on
either side that the other does not follow fails here. A dialect the kits speak before the
reference client does (AHEAD, empty while they agree) is checked once reference_impl/dialect.cc
names it; until then test_dialects_ahead_of_the_reference is skipped, saying which.
    python3 -m unittest discover -s harness/adapters/kit/tests -p 'test_*.py'
"""
import json
import re
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
REF = REPO / "reference_impl"
PROTOCOL = json.loads((REPO / "harness/adapters/kit/protocol.json").read_text(encoding="utf-8"))
SCHEMA = json.loads((REPO / "harness/schema/adapter-protocol.schema.json").read_text(
    encoding="utf-8"))
FAILURE = SCHEMA["$defs"]["failure"]["properties"]


# Dialects the kits speak ahead of the reference client: compared with its sources once
# reference_impl/dialect.cc names them, left out of the comparisons until then.
AHEAD = set()


def source(name):
    return (REF / name).read_text(encoding="utf-8")


def reference_dialects():
    """{dialect name: its Dialect enumerator} of the reference client (dialect.cc ToString)."""
    body = function_body(source("dialect.cc"), "std::string_view ToString(Dialect dialect)")
    return {name: kind for kind, name in re.findall(
        r"case Dialect::(k\w+):\s+return \"([a-z-]+)\";", body)}


def checked_dialects():
    """The kits' dialects that the reference client names too: {name: its protocol.json entry}."""
    kinds = reference_dialects()
    return {name: d for name, d in PROTOCOL["dialects"].items() if name in kinds}


def code_name(enumerator):
    """FailureCode::kContextWindowExceeded -> CONTEXT_WINDOW_EXCEEDED, via failure.cc's table."""
    names = dict(re.findall(r"\{FailureCode::(k\w+), \"(\w+)\"\}", source("failure.cc")))
    return names[enumerator]


def function_body(text, signature):
    start = text.index(signature)
    return text[start:text.index("\n}\n", start)]


class ProtocolJsonTest(unittest.TestCase):
    def test_names_of_the_taxonomy(self):
        failure_cc = source("failure.cc")
        self.assertEqual(FAILURE["class"]["enum"],
                         re.findall(r"\{FailureClass::k\w+, \"([a-z-]+)\"\}", failure_cc))
        codes = re.findall(r"\{FailureCode::k\w+, \"(\w+)\"\}", failure_cc)
        self.assertEqual(sorted(PROTOCOL["codes"]), sorted(codes))
        self.assertEqual(sorted(FAILURE["code"]["enum"]), sorted(codes))
        phases = re.findall(r"case Phase::k\w+:\s+return \"([a-z-]+)\";", failure_cc)
        self.assertEqual(FAILURE["phase"]["enum"], phases)
        partial = re.findall(r"case PartialOutput::k\w+:\s+return \"([a-z-]+)\";", failure_cc)
        self.assertEqual(FAILURE["partial_output"]["enum"], partial)
        sources = re.findall(r"\{DelaySource::k\w+, \"([a-z-]+)\"\}", source("retry_after.cc"))
        self.assertEqual(SCHEMA["$defs"]["delay_source"]["enum"], sources)

    def test_status_table(self):
        rows = re.findall(r"\{(\d{3}), FailureCode::(k\w+), FailureClass::k\w+, (true|false)\}",
                          source("classify.cc"))
        self.assertTrue(rows)
        want = {status: [code_name(code), flag == "true"] for status, code, flag in rows}
        self.assertEqual(PROTOCOL["http_status"], want)

    def test_provider_error_table(self):
        text = source("stream_error_class.cc")
        kinds = {name: code for name, code in re.findall(
            r"constexpr ProviderErrorClass (k\w+)\{FailureCode::(k\w+),", text)}
        rows = re.findall(r"\{\"(\w+)\", (k\w+)\}", text)
        self.assertTrue(rows)
        self.assertEqual(PROTOCOL["provider_errors"],
                         {name: code_name(kinds[kind]) for name, kind in rows})
        for name, kind in rows:  # the retryable column is the code's in protocol.json
            flag = re.search(rf"constexpr ProviderErrorClass {kind}\{{[^}}]*,\s*(true|false)\}}",
                             text).group(1)
            self.assertEqual(PROTOCOL["codes"][code_name(kinds[kind])][1], flag == "true", name)

    def test_wording(self):
        text = source("classify.cc")
        shared = source("stream_error_class.cc")

        self.assertEqual(PROTOCOL["wording"]["context_window"],
                         wordings(shared, "bool SaysContextOverflow("))
        self.assertIn("SaysContextOverflow(error.message)",
                      function_body(text, "bool IsContextWindow("))
        self.assertEqual(PROTOCOL["wording"]["quota"], wordings(shared, "bool SaysQuotaExhausted("))
        self.assertEqual(PROTOCOL["wording"]["overloaded_5xx"],
                         wordings(shared, "bool SaysModelOverloaded("))
        is_quota = function_body(text, "bool IsQuota(")
        self.assertIn("SaysQuotaExhausted(error.message) && !error.retry_info", is_quota)
        self.assertIn(f'ends_with("{PROTOCOL["retry_info_type"]}")',
                      function_body(text, "bool HasRetryInfo("))
        self.assertIn('FieldText(*error, "status")',
                      function_body(text, "BodyError ReadBodyError("))
        refine = function_body(text, "StatusRow Refine(")
        self.assertIn("row.status >= 500 && SaysModelOverloaded(error.message)", refine)
        for key, statuses in PROTOCOL["refine_statuses"].items():
            condition = " || ".join(f"status == {s}" for s in statuses)
            self.assertIn(f"({condition})", refine, key)

    def test_stream_refine(self):
        """ClassifyStreamError: `if (<codes> && Says...(message)) return k...;`, each clause."""
        text = source("stream_error_class.cc")
        body = function_body(text, "std::optional<ProviderErrorClass> ClassifyStreamError(")
        kinds = {name: code for name, code in re.findall(
            r"constexpr ProviderErrorClass (k\w+)\{FailureCode::(k\w+),", text)}
        flags = {name: re.findall(r"FailureCode::(k\w+)", value)
                 for name, value in re.findall(r"const bool (\w+) =([^;]+);", body)}
        says = {"SaysModelOverloaded": wordings(text, "bool SaysModelOverloaded("),
                "SaysQuotaExhausted": wordings(text, "bool SaysQuotaExhausted("),
                "SaysContextOverflow": wordings(text, "bool SaysContextOverflow(")}
        want = {}
        for condition, function, result in re.findall(
                r"if \(([^&]+?) && (Says\w+)\(message\)\) return (k\w+);", body):
            codes = flags.get(condition.strip()) or re.findall(r"FailureCode::(k\w+)", condition)
            wording = next(k for k, v in PROTOCOL["wording"].items() if v == says[function])
            for code in codes:
                want[code_name(code)] = [wording, code_name(kinds[result])]
        self.assertTrue(want)
        self.assertEqual(PROTOCOL["stream_refine"], want)

    def test_dialects(self):
        kinds = reference_dialects()
        # Every dialect of the reference client is the kits'; the kits may be AHEAD of it.
        self.assertEqual(sorted(checked_dialects()), sorted(kinds))
        self.assertLessEqual(set(PROTOCOL["dialects"]) - set(kinds), AHEAD)
        call = source("call_request.cc")
        paths = function_body(call, "std::string_view DialectPath(")
        assembler = source("assembler.cc")
        terminators = function_body(assembler, "std::string_view TerminatorOf(")
        for name, dialect in checked_dialects().items():
            kind = kinds[name]
            path = re.search(rf"case Dialect::{kind}:\s+return \"([^\"]+)\";", paths).group(1)
            terminator = re.search(rf"case Dialect::{kind}:\s+return \"((?:[^\"\\]|\\.)*)\";",
                                   terminators).group(1).replace('\\"', '"')
            self.assertEqual(dialect["terminator"], terminator, name)
            if "path_fields" not in dialect:
                self.assertEqual(dialect["path"], path, name)
                continue
            # The model and the method in the path (RequestPath: the dialect's path, the model,
            # then the method's literal), the rest in the body (ToWire).
            request_path = function_body(call, "std::string RequestPath(")
            for key in ("path", "path_unstreamed"):
                prefix, method = dialect[key].split("{model}")
                self.assertEqual(prefix, path, f"{name} {key}")
                self.assertIn(f'"{method}"', request_path, f"{name} {key}")
            if "version_prefix" in dialect:
                self.assertEqual(dialect["version_prefix"], path[:path.index("/", 1)], name)
                self.assertIn(f'base_path.ends_with("{dialect["version_prefix"]}")',
                              request_path)
            to_wire = function_body(call, "WireRequest ToWire(")
            self.assertEqual(sorted(set(re.findall(r'body\.erase\("(\w+)"\);', to_wire))),
                             sorted(dialect["path_fields"]), name)

    def test_dialects_ahead_of_the_reference(self):
        """Says (as a skip) which dialects the kits speak that the reference client does not name
        yet, and so are not compared with it."""
        ahead = sorted(set(PROTOCOL["dialects"]) - set(reference_dialects()))
        if ahead:
            self.skipTest(f"{', '.join(ahead)}: not in reference_impl/dialect.cc yet, so its "
                          "path, terminator and framing are not compared with the reference")

    def test_framing(self):
        """How each dialect frames a stream (dialect.cc StreamFramingOf), the media type of each
        framing (StreamMediaType), asked for by call_request.cc BuildHttpRequest's accept and
        checked by assembler.cc CheckContentType, which dialects stream a request without "stream", and the class of an
        in-stream error that names no kind (stream_error_class.cc ClassifyStreamError)."""
        dialect_cc = source("dialect.cc")
        kinds = reference_dialects()
        framing_of = function_body(dialect_cc, "StreamFraming StreamFramingOf(Dialect dialect)")
        framed = {kind: framing for kind, framing in re.findall(
            r"case Dialect::(k\w+):\s+return StreamFraming::k(\w+);", framing_of)}
        self.assertTrue(framed)
        for name, dialect in checked_dialects().items():
            want = framed.get(kinds[name], "Sse").lower()
            self.assertEqual(dialect.get("framing"), want, name)
        # The media type of each framing (StreamMediaType), which the accept header asks for
        # (BuildHttpRequest) and the response's content type must be (CheckContentType).
        media = function_body(dialect_cc, "std::string_view StreamMediaType(Dialect dialect)")
        types = {framing.lower(): media_type for framing, media_type in re.findall(
            r"case StreamFraming::k(\w+):\s+return \"([^\"]+)\";", media)}
        types["sse"] = re.findall(r'return "([^"]+)";', media)[-1]
        self.assertEqual(PROTOCOL["framings"], types)
        self.assertIn("StreamMediaType(dialect)",
                      function_body(source("assembler.cc"), "std::optional<Failure> CheckContentType("))
        self.assertIn("StreamMediaType(request.dialect)",
                      function_body(source("call_request.cc"), "std::string BuildHttpRequest("))
        # A request without "stream": Gemini's path says a stream (ToWire), Ollama's server
        # streams (the fake provider reads it so); the others need "stream": true.
        self.assertIn("bool stream = true;",
                      function_body(source("call_request.cc"), "WireRequest ToWire("))
        ollama = (REPO / "fake_provider/wire/dialect_ollama.cc").read_text(encoding="utf-8")
        self.assertIn("TargetKind::kBodyDecidesStreamByDefault", ollama)
        self.assertEqual(sorted(n for n, d in PROTOCOL["dialects"].items()
                                if d.get("streams_by_default")),
                         ["bedrock-converse", "gemini", "ollama"])
        # Ollama's {"error":"text"}: the text is the message (classify.cc ReadBodyError), and
        # inside a stream an error that names no kind is the dialect's untyped class, unrefined.
        self.assertIn("error->is_string()", function_body(source("classify.cc"),
                                                          "BodyError ReadBodyError("))
        text = source("stream_error_class.cc")
        classes = {name: code for name, code in re.findall(
            r"constexpr ProviderErrorClass (k\w+)\{FailureCode::(k\w+),", text)}
        body = function_body(text, "std::optional<ProviderErrorClass> ClassifyStreamError(")
        untyped = re.findall(r"if \(!known && dialect == Dialect::(k\w+) && type\.empty\(\) && "
                             r"code\.empty\(\)\) return (k\w+);", body)
        self.assertTrue(untyped)
        names = {kind: name for name, kind in kinds.items()}
        self.assertEqual({names[kind]: code_name(classes[cls]) for kind, cls in untyped},
                         {name: d["untyped_stream_error"] for name, d in
                          PROTOCOL["dialects"].items() if "untyped_stream_error" in d})
        # Before the wordings refine the table's code: the untyped rule returns first.
        self.assertLess(body.index("type.empty() && code.empty()"),
                        body.index("SaysModelOverloaded"))

    def test_content_filter_finishes(self):
        body = function_body(source("assembler.cc"), "bool IsContentFilterFinish(")
        withheld = re.search(r"kWithheld\[\] = \{([^}]*)\}", body).group(1)
        self.assertEqual(PROTOCOL["content_filter_finishes"], re.findall(r'"(\w+)"', withheld))


def wordings(text, function):
    """The wordings a `return Contains(text, "a") && ... || ...;` function checks, as groups."""
    body = function_body(text, function)
    groups = []
    for clause in re.split(r"\|\|", body.split("return", 1)[1]):
        words = re.findall(r"Contains\(text, \"([^\"]+)\"\)", clause)
        if words:
            groups.append(words)
    return groups


if __name__ == "__main__":
    unittest.main()
