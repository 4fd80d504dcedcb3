"""The kits' protocol.json and the protocol's JSON Schema must say what the reference client
says: its classification tables (reference_impl/classify.cc, stream_error_class.cc), its taxonomy
names (failure.cc) and its delay sources (retry_after.cc) are read from the C++ sources and
compared, so that a change on either side that the other does not follow fails here.
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


def source(name):
    return (REF / name).read_text(encoding="utf-8")


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

        def wordings(function):
            body = function_body(text, function)
            groups = []
            for clause in re.split(r"\|\|", body.split("return", 1)[1]):
                words = re.findall(r"Contains\(text, \"([^\"]+)\"\)", clause)
                if words:
                    groups.append(words)
            return groups

        self.assertEqual(PROTOCOL["wording"]["context_window"], wordings("bool IsContextWindow("))
        self.assertEqual(PROTOCOL["wording"]["quota"], wordings("bool IsQuota("))
        refine = function_body(text, "StatusRow Refine(")
        self.assertIn(f'"{PROTOCOL["wording"]["overloaded_5xx"][0][0]}"', refine)
        for key, statuses in PROTOCOL["refine_statuses"].items():
            condition = " || ".join(f"status == {s}" for s in statuses)
            self.assertIn(f"({condition})", refine, key)


if __name__ == "__main__":
    unittest.main()
