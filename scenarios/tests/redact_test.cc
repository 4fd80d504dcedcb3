#include "scenarios/redact.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline::scenario {
namespace {

// Issue 30, item 6: each reproduction as reported, with the secret it leaked.
TEST(RedactSecretsTest, AKeyInsideAQuotedWordOfACommand) {
  EXPECT_EQ(RedactSecrets("sed -u 's/x/sk-live-0123456789abcdef/' | node a.mjs"),
            "sed -u 's/x/[redacted]/' | node a.mjs");
}

TEST(RedactSecretsTest, ProviderErrorsOnStderr) {
  EXPECT_EQ(RedactSecrets("Incorrect API key provided: sk-live-0123456789abcdef. See docs"),
            "Incorrect API key provided: [redacted]. See docs");
  EXPECT_EQ(RedactSecrets("> Authorization: Bearer sk-live-0123456789abcdef\n< HTTP/1.1 401\n"),
            "> Authorization: Bearer [redacted]\n< HTTP/1.1 401\n");
  EXPECT_EQ(RedactSecrets("sent Bearer abc.def-123 to the server"),
            "sent Bearer [redacted] to the server");
}

TEST(RedactSecretsTest, UrlUserinfoFlagsAndHuggingFaceTokens) {
  EXPECT_EQ(RedactSecrets("GET https://user:pass@example.com/v1?x=1 failed"),
            "GET https://[redacted]@example.com/v1?x=1 failed");
  EXPECT_EQ(RedactSecrets("curl https://TOKEN@host/"), "curl https://[redacted]@host/");
  EXPECT_EQ(RedactSecrets("app -k s3cr3t --key 'two words' --token=abc --verbose"),
            "app -k [redacted] --key '[redacted]' --token=[redacted] --verbose");
  EXPECT_EQ(RedactSecrets("token hf_abcdefghijklmnopqrstuvwxyz012345 refused"),
            "token [redacted] refused");
}

TEST(RedactSecretsTest, EveryProviderKeyShape) {
  for (std::string key :
       {"sk-ant-api03-0123456789", "sk-proj-0123456789abc", "hf_0123456789abcdef",
        "AIzaSyA0123456789abcdefghijklmnopqrs", "xai-0123456789abcdef", "gsk_0123456789abcdef",
        "AKIAIOSFODNN7EXAMPLE", "ghp_0123456789abcdefghij",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}) {
    EXPECT_EQ(RedactSecrets("a " + key + " b"), "a [redacted] b") << key;
    EXPECT_TRUE(KeyShaped(key.substr(0, key.find('.')))) << key;
  }
  for (std::string_view word : {"sk-short", "AKIAlower0000000000x", "hf_", "skipping", "eyJ"}) {
    EXPECT_FALSE(KeyShaped(word)) << word;
  }
}

TEST(RedactSecretsTest, ValuesOfSecretNames) {
  EXPECT_EQ(RedactSecrets("OPENAI_API_KEY=abc node a.mjs --api-key s3cr3t -v"),
            "OPENAI_API_KEY=[redacted] node a.mjs --api-key [redacted] -v");
  EXPECT_EQ(RedactSecrets("/v1/models?key=abc&api_key=d&access_token=e&sig=f&alt=json"),
            "/v1/models?key=[redacted]&api_key=[redacted]&access_token=[redacted]&sig=[redacted]"
            "&alt=json");
  EXPECT_EQ(RedactSecrets(R"({"a":{"b":[{"api_key" : "v\"w","model":"m","max_tokens":5}]}})"),
            R"({"a":{"b":[{"api_key" : "[redacted]","model":"m","max_tokens":5}]}})");
  EXPECT_EQ(RedactSecrets("X-Api-Key: abc\r\nHost: h\r\n"), "X-Api-Key: [redacted]\r\nHost: h\r\n");
  EXPECT_EQ(RedactSecrets("-H 'Ocp-Apim-Subscription-Key: abc' -d x"),
            "-H 'Ocp-Apim-Subscription-Key: [redacted]' -d x");
}

TEST(RedactSecretsTest, LeavesWhatIsNotASecret) {
  for (std::string_view text :
       {"node harness/adapters/openai-node.mjs --helper", "Unexpected token: } in JSON at 12",
        "API key: missing", "--max-tokens 100 --no-auth --verbose", "status=429 retry-after=2",
        R"({"model":"gpt","max_tokens":5,"messages":[{"role":"user","content":"key"}]})",
        "https://example.com:8080/path?x=1", "Idempotency-Key: 42", "[redacted] [redacted]"}) {
    EXPECT_EQ(RedactSecrets(text), text);
  }
}

TEST(RedactSecretsTest, IsIdempotentAndKeepsEqualInputsEqual) {
  const std::string text =
      "KEY=a https://u:p@h -k x Authorization: Bearer y sk-live-0123456789abcdef";
  EXPECT_EQ(RedactSecrets(RedactSecrets(text)), RedactSecrets(text));
}

TEST(RedactSecretsTest, DeepOrHostileInputCostsOnePass) {
  std::string deep;
  for (int i = 0; i < 100'000; ++i) deep += R"({"token":)";
  deep += R"("t")";
  for (int i = 0; i < 100'000; ++i) deep += "}";
  const std::string redacted = RedactSecrets(deep);
  EXPECT_NE(redacted.find(R"({"token":"[redacted]"})"), std::string::npos);
  const std::string unclosed(200'000, '=');
  EXPECT_EQ(RedactSecrets("key='" + unclosed), "key='" + unclosed);
}

TEST(SecretNameTest, ByWordNotBySubstring) {
  for (std::string_view name : {"Authorization",
                                "Proxy-Authorization",
                                "Authentication",
                                "Cookie",
                                "x-api-key",
                                "Ocp-Apim-Subscription-Key",
                                "X-Auth-Key",
                                "X-Functions-Key",
                                "X-Access-Key",
                                "X-Goog-Api-Key",
                                "x-apikey",
                                "OPENAI_API_KEY",
                                "--token",
                                "accessToken",
                                "signature",
                                "X-Amz-Security-Token",
                                "client_secret",
                                "DB_PASSWORD",
                                "key",
                                "sig"}) {
    EXPECT_TRUE(SecretName(name)) << name;
  }
  for (std::string_view name :
       {"Host", "Content-Type", "max_tokens", "author", "Idempotency-Key", "anthropic-version",
        "OpenAI-Organization", "keep-alive", "x-request-id", "--helper", ""}) {
    EXPECT_FALSE(SecretName(name)) << name;
  }
}

// A key cut through by the 64 KiB tail of a subject's stderr: without its "sk-" start the rest
// is not key-shaped, so the cut drops the word's rest instead of keeping it to escape redaction.
TEST(CutForRedactionTest, AWordCutThroughKeepsNoneOfItsRest) {
  const std::string key = "sk-proj-" + std::string(40, 'A') + "Secret9";
  const std::string text = "start of the log\nkey " + key + " used\nlast line\n";
  const std::size_t max = text.size() - text.find(key) - 5;  // the cut falls inside the key
  const std::string kept = CutForRedaction(text, max);
  EXPECT_EQ(kept.find("Secret9"), std::string::npos) << kept;
  EXPECT_EQ(kept, "[…] used\nlast line\n");
  EXPECT_EQ(RedactSecrets(kept), kept);
  // A cut at a word's start keeps the word, which redaction then sees whole.
  const std::size_t at_word = text.size() - text.find(key);
  EXPECT_EQ(RedactSecrets(CutForRedaction(text, at_word)), "[redacted] used\nlast line\n");
  // Nothing to cut: as it is. No space at all in what is kept: only the marker.
  EXPECT_EQ(CutForRedaction("short", 64), "short");
  EXPECT_EQ(CutForRedaction(std::string(100, 'x'), 10), "[…]");
}

}  // namespace
}  // namespace faultline::scenario
