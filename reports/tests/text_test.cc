// Escaping, UTF-8 repair, shortening and the human formats shared by the renderers; and the
// format names of report.h.
#include "reports/text.h"

#include <gtest/gtest.h>

#include "reports/report.h"

namespace faultline::report {
namespace {

using namespace internal;

TEST(XmlEscape, EscapesSpecialsAndControls) {
  EXPECT_EQ(XmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(XmlEscape("a\tb\nc\rd"), "a\tb\nc\rd");
  EXPECT_EQ(XmlEscape("a\tb\nc\rd", /*attribute=*/true), "a&#9;b&#10;c&#13;d");
  EXPECT_EQ(XmlEscape(std::string("nul\0bell\x07"
                                  "esc\x1b",
                                  13)),
            "nul\\x00bell\\x07esc\\x1B");
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBE"), "\\uFFFE") << "U+FFFE is not an XML character";
  EXPECT_EQ(XmlEscape("héllo ✓ 😀"), "héllo ✓ 😀");
}

TEST(RepairUtf8, ReplacesInvalidSequences) {
  EXPECT_EQ(RepairUtf8("ok"), "ok");
  EXPECT_EQ(RepairUtf8("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(RepairUtf8("\xC3"), "\xEF\xBF\xBD") << "truncated sequence";
  EXPECT_EQ(RepairUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "overlong";
  EXPECT_EQ(RepairUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD") << "surrogate";
  EXPECT_EQ(XmlEscape("x\xFE"), "x\xEF\xBF\xBD");
}

TEST(MarkdownCell, EscapesPipesNewlinesAndMarkup) {
  EXPECT_EQ(MarkdownCell("a|b"), "a\\|b");
  EXPECT_EQ(MarkdownCell("line 1\nline 2\r\n"), "line 1<br>line 2<br>");
  EXPECT_EQ(MarkdownCell("<script>&"), "&lt;script&gt;&amp;");
  EXPECT_EQ(MarkdownCell("*bold* _x_ `code` [link]"), "\\*bold\\* \\_x\\_ \\`code\\` \\[link\\]");
  EXPECT_EQ(MarkdownCell("bell\x07"), "bell\\x07");
  EXPECT_EQ(MarkdownCell("rate-limit/retry-after"), "rate-limit/retry-after");
}

TEST(Shorten, CountsCodePoints) {
  EXPECT_EQ(Shorten("hello", 5), "hello");
  EXPECT_EQ(Shorten("hello world", 6), "hello…") << "trailing space dropped before the ellipsis";
  EXPECT_EQ(Shorten("ééééé", 3), "ééé…");
  EXPECT_EQ(Shorten("", 3), "");
  EXPECT_EQ(FirstLine("one\ntwo"), "one");
}

TEST(Formats, HumanUnits) {
  EXPECT_EQ(FormatMs(0.42), "0.4 ms");
  EXPECT_EQ(FormatMs(12.34), "12 ms");
  EXPECT_EQ(FormatMs(999.4), "999 ms");
  EXPECT_EQ(FormatMs(2345.0), "2.35 s");
  EXPECT_EQ(FormatMs(125000.0), "125 s");
  EXPECT_EQ(FormatMs(std::optional<double>()), "–");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(3 * 1024 * 1024), "3.0 MiB");
  EXPECT_EQ(JUnitSeconds(1500), "1.500");
  EXPECT_EQ(JUnitSeconds(0.4), "0.000");
  EXPECT_EQ(Category("rate-limit/retry-after"), "rate-limit");
  EXPECT_EQ(Category("loose"), "uncategorized");
  EXPECT_EQ(Category("/odd"), "uncategorized");
}

TEST(ReportFormats, NamesExtensionsAndPaths) {
  EXPECT_EQ(ParseFormat("json"), Format::kJson);
  EXPECT_EQ(ParseFormat("junit"), Format::kJUnit);
  EXPECT_EQ(ParseFormat("md"), Format::kMarkdown);
  EXPECT_EQ(ParseFormat("markdown"), Format::kMarkdown);
  EXPECT_EQ(ParseFormat("html"), Format::kHtml);
  ASSERT_FALSE(ParseFormat("xml").has_value());
  EXPECT_EQ(ParseFormat("xml").error(),
            "unknown report format \"xml\" (expected json|junit|md|html)");
  for (Format format : {Format::kJson, Format::kJUnit, Format::kMarkdown, Format::kHtml}) {
    EXPECT_EQ(ParseFormat(ToString(format)), format);
    EXPECT_EQ(FormatForPath(std::string("out/report") + std::string(FileExtension(format))),
              format);
  }
  EXPECT_EQ(FileExtension(Format::kJUnit), ".xml");
  EXPECT_EQ(FormatForPath("REPORT.HTM"), Format::kHtml);
  EXPECT_EQ(FormatForPath("summary.markdown"), Format::kMarkdown);
  EXPECT_EQ(FormatForPath("report.txt"), std::nullopt);
  EXPECT_EQ(FormatForPath("json"), std::nullopt);
}

}  // namespace
}  // namespace faultline::report
