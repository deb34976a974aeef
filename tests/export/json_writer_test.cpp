// The exporter's JSON building blocks: exact microsecond text, string escaping with invalid UTF-8
// replaced, the buffered writer, and the stored-args object splitter.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rlscope/export/json_object_text.h"
#include "rlscope/export/json_writer.h"
#include "rlscope/trace/error.h"
#include "support/temp_dir.h"

namespace rlscope::exporter {
namespace {

TEST(SignedSecondsText, ExactToTheNanosecondOverTheWholeRange) {
  using trace::signedSecondsText;
  EXPECT_EQ(signedSecondsText(0), "+0.000000000 s");
  EXPECT_EQ(signedSecondsText(-1'000'000'123'457), "-1000.000123457 s");
  EXPECT_EQ(signedSecondsText(5'000'000), "+0.005000000 s");
  EXPECT_EQ(signedSecondsText(std::numeric_limits<std::int64_t>::min()), "-9223372036.854775808 s");
  EXPECT_EQ(signedSecondsText(std::numeric_limits<std::int64_t>::max()), "+9223372036.854775807 s");
}

TEST(FormatMicros, WritesThreeDecimalsWithIntegerArithmetic) {
  EXPECT_EQ(microsText(0), "0.000");
  EXPECT_EQ(microsText(1), "0.001");
  EXPECT_EQ(microsText(999), "0.999");
  EXPECT_EQ(microsText(1000), "1.000");
  EXPECT_EQ(microsText(1500), "1.500");
  EXPECT_EQ(microsText(1'695'835'573'023'613'042), "1695835573023613.042");
  EXPECT_EQ(microsText(-1), "-0.001");
  EXPECT_EQ(microsText(-999), "-0.999");
  EXPECT_EQ(microsText(-1000), "-1.000");
  EXPECT_EQ(microsText(-1500), "-1.500");
  EXPECT_EQ(microsText(std::numeric_limits<std::int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(microsText(std::numeric_limits<std::int64_t>::min()), "-9223372036854775.808");
  EXPECT_EQ(microsText(std::numeric_limits<std::int64_t>::min()).size(), kMaxMicrosChars);
}

std::string jsonQuoted(std::string_view s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}

TEST(JsonString, EscapesWhatJsonRequires) {
  EXPECT_EQ(jsonQuoted(""), "\"\"");
  EXPECT_EQ(jsonQuoted("plain"), "\"plain\"");
  EXPECT_EQ(jsonQuoted("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(jsonQuoted("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(jsonQuoted(std::string("\x00\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
}

TEST(JsonString, KeepsUtf8AndReplacesEachBadByte) {
  const std::string ok = "é λ ✓ 日本 🚀 \xEF\xBF\xBF \xF4\x8F\xBF\xBF";  // up to U+10FFFF
  EXPECT_EQ(jsonQuoted(ok), "\"" + ok + "\"");
  const std::string r = "\xEF\xBF\xBD";                                    // U+FFFD
  EXPECT_EQ(jsonQuoted("a\x80z"), "\"a" + r + "z\"");                      // lone continuation byte
  EXPECT_EQ(jsonQuoted("\xC0\xAF"), "\"" + r + r + "\"");                  // overlong '/'
  EXPECT_EQ(jsonQuoted("\xE0\x80\xAF"), "\"" + r + r + r + "\"");          // overlong
  EXPECT_EQ(jsonQuoted("\xED\xA0\x80"), "\"" + r + r + r + "\"");          // UTF-16 surrogate
  EXPECT_EQ(jsonQuoted("\xF4\x90\x80\x80"), "\"" + r + r + r + r + "\"");  // above U+10FFFF
  EXPECT_EQ(jsonQuoted("\xF5"), "\"" + r + "\"");
  EXPECT_EQ(jsonQuoted("x\xE2\x82"), "\"x" + r + r + "\"");  // truncated at the end
  EXPECT_EQ(jsonQuoted("\xE2\x82x"), "\"" + r + r + "x\"");  // truncated before ASCII
  // Whatever comes in, nlohmann reads the result back as the same valid text.
  for (std::string s : {ok, std::string("a\x80z\xFF\"\\\n"), std::string("\xC3")}) {
    auto text = jsonQuoted(s);
    EXPECT_TRUE(nlohmann::json::accept(text)) << text;
  }
}

TEST(JsonWriter, StreamsMoreThanItsBufferAndFormatsNumbers) {
  rlscope::testing::TempDir dir;
  auto path = dir / "out.json";
  std::uint64_t written = 0;
  std::string big(3 * 1024 * 1024 + 17, 'x');
  big[12345] = '"';
  {
    JsonWriter w(path);
    w.raw('[');
    w.string(big);
    w.raw(',');
    w.integer(std::numeric_limits<std::int64_t>::min());
    w.raw(',');
    w.integer(std::numeric_limits<std::int64_t>::max());
    w.raw(',');
    w.micros(-1);
    w.raw(',');
    w.number(0.1);
    w.raw(',');
    w.number(7.744);
    w.raw(',');
    w.number(1e300);
    w.raw(',');
    w.number(std::nan(""));
    w.raw(',');
    w.number(-std::numeric_limits<double>::infinity());
    w.raw(',');
    w.boolean(true);
    w.raw(']');
    w.close();
    written = w.bytesWritten();
  }
  auto text = rlscope::testing::readFile(path);
  auto doc = nlohmann::json::parse(text);
  auto expected = big;
  expected.replace(12345, 1, "\"");
  EXPECT_EQ(doc[0], expected);
  EXPECT_EQ(doc[1], std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(doc[2], std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(written, text.size());
  EXPECT_EQ(text.substr(text.rfind("-0.001")), "-0.001,0.1,7.744,1e+300,null,null,true]");
}

TEST(JsonWriter, CannotCreateIsATraceError) {
  rlscope::testing::TempDir dir;
  EXPECT_THROW(JsonWriter(dir / "missing" / "out.json"), trace::TraceError);
}

TEST(JsonObjectText, AcceptsExactlyOneObject) {
  JsonObjectValidator v;
  auto isJsonObject = [&](std::string_view text) { return v.isObject(text); };
  EXPECT_TRUE(isJsonObject("{}"));
  EXPECT_TRUE(isJsonObject(" \n{ \"a\" : [1, {\"b\": \"}\"}] }\t"));
  EXPECT_FALSE(isJsonObject(""));
  EXPECT_FALSE(isJsonObject("[]"));
  EXPECT_FALSE(isJsonObject("\"{}\""));
  EXPECT_FALSE(isJsonObject("{"));
  EXPECT_FALSE(isJsonObject("{} {}"));
  EXPECT_FALSE(isJsonObject("{\"a\":1,}"));
  EXPECT_FALSE(isJsonObject("{\"a\":\"\xFF\"}"));  // invalid UTF-8 inside a string
  EXPECT_FALSE(isJsonObject("{\"a\":NaN}"));
  EXPECT_FALSE(isJsonObject("{\"a\":01}"));
  EXPECT_FALSE(isJsonObject(std::string(2000, '[') + std::string(2000, ']')));
  EXPECT_FALSE(isJsonObject("{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}"));
  // Numbers beyond 64 bits are JSON too (simdjson alone would refuse them).
  EXPECT_TRUE(isJsonObject("{\"big\":123456789012345678901234567890,\"x\":-1e308}"));
}

TEST(JsonObjectText, SplitsTopLevelMembersVerbatim) {
  JsonObjectValidator v;
  std::vector<JsonMember> m;
  std::string text =
      R"( { "a" : 1 , "b\"}" :{"x":[1,"]}",{"y":"\\"}]}, "c":"q\"}" ,"d":-1.50e3,"e":[] } )";
  ASSERT_TRUE(v.isObject(text));
  splitMembers(text, m);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].key, "\"a\"");
  EXPECT_EQ(m[0].value, "1");
  EXPECT_EQ(m[1].key, R"("b\"}")");
  EXPECT_EQ(m[1].value, R"({"x":[1,"]}",{"y":"\\"}]})");
  EXPECT_EQ(m[2].value, R"("q\"}")");
  EXPECT_EQ(m[3].value, "-1.50e3");
  EXPECT_EQ(m[4].value, "[]");
  splitMembers(" { } ", m);
  EXPECT_TRUE(m.empty());
}

TEST(JsonObjectText, ComparesKeysThroughEscapes) {
  EXPECT_TRUE(keyEquals("\"External id\"", "External id"));
  EXPECT_TRUE(keyEquals("\"\\u0045xternal id\"", "External id"));
  EXPECT_FALSE(keyEquals("\"External\"", "External id"));
  EXPECT_FALSE(keyEquals("\"\"", "x"));
}

}  // namespace
}  // namespace rlscope::exporter
