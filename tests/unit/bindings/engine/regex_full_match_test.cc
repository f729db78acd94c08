// RegexFullMatch (regex_full_match.h) against ONNX's definition (the whole string matches the
// RE2 pattern), the expected values worked out by hand and checked with Python's re (ASCII
// \w, as RE2's); and the engine loading models with a valid and an invalid pattern.
#include "bindings/engine/regex_full_match.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"
#include "tests/unit/support/error_of.h"
#include "tests/unit/support/node_of.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

using test::error_of;
using Strings = std::vector<std::string>;

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";

Node regex_node(const std::string& pattern) {
  Attribute a;
  a.kind = AttrKind::String;
  a.s = pattern;
  return test::node_of("RegexFullMatch", {{"pattern", a}});
}

std::vector<uint8_t> matches(const RegexFullMatch& re, std::vector<int64_t> shape, Strings s) {
  const EngineValue x = EngineValue::of(Tensor(std::move(shape), std::move(s)));
  const std::vector<EngineValue> out = re.run({&x}, int64_t{1} << 30);
  const Tensor& y = out.at(0).tensor("");
  EXPECT_EQ(y.dtype(), DType::Bool);
  return std::vector<uint8_t>(y.as<uint8_t>(), y.as<uint8_t>() + y.elements());
}

TEST(RegexFullMatchTest, MatchesWholeStrings) {
  // ONNX's test_regex_full_match_email_domain pattern, and one of e-mail addresses.
  const RegexFullMatch www(regex_node(R"((\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$))"), "m");
  EXPECT_EQ(matches(www, {2, 2},
                    {"account@gmail.com", "account@hotmail.com", "not email", "abc@yahoo.com"}),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  const RegexFullMatch email(regex_node(R"([\w.+-]+@[\w-]+\.(com|org))"), "m");
  EXPECT_EQ(matches(email, {7},
                    {"ann@example.com", "bob.smith+tag@mail-server.org", "carol@example.net",
                     "@example.com", "dave@example.com ", "\xc3\x84rger@x.org", ""}),
            (std::vector<uint8_t>{1, 1, 0, 0, 0, 0, 0}));
  // Anchored at both ends: a match inside the string is not one.
  const RegexFullMatch b(regex_node("b+"), "m");
  EXPECT_EQ(matches(b, {3}, {"bbb", "abbb", "bbba"}), (std::vector<uint8_t>{1, 0, 0}));
  // An empty X gives an empty Y of its shape.
  EXPECT_TRUE(matches(b, {2, 0}, {}).empty());
}

TEST(RegexFullMatchTest, ReadsUtf8ByCodePoint) {
  // "." is one code point (2 bytes each here), \p{Greek} a Unicode script.
  const RegexFullMatch three(regex_node("..."), "m");
  EXPECT_EQ(matches(three, {2}, {"\xce\xb1\xce\xb2\xce\xb3", "abcd"}),
            (std::vector<uint8_t>{1, 0}));
  const RegexFullMatch greek(regex_node(R"(\p{Greek}+)"), "m");
  EXPECT_EQ(matches(greek, {2}, {"\xce\xb1\xce\xb2\xce\xb3", "abc"}), (std::vector<uint8_t>{1, 0}));
}

TEST(RegexFullMatchTest, NoPatternBacktracks) {
  // (a*)*b against a long run of a's and no b: exponential for a backtracking matcher,
  // linear for RE2. 10^5 characters, so a backtracking one would not finish.
  const RegexFullMatch re(regex_node("(a*)*b"), "m");
  EXPECT_EQ(matches(re, {1}, {std::string(100000, 'a')}), (std::vector<uint8_t>{0}));
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the test makes threads
  // Several threads share one compiled pattern.
  std::vector<std::thread> threads;
  std::vector<std::vector<uint8_t>> got(4);
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] { got[t] = matches(re, {2}, {"aab", std::string(1000, 'a')}); });
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, (std::vector<uint8_t>{1, 0}));
#endif
}

TEST(RegexFullMatchTest, BadPatternsAndInputsFail) {
  EXPECT_EQ(error_of([] { RegexFullMatch(regex_node("[a-z"), "RegexFullMatch 'm'"); }),
            "RegexFullMatch 'm': invalid pattern '[a-z' (RE2 syntax): missing ]: [a-z");
  // RE2 has no backreferences.
  EXPECT_NE(error_of([] { RegexFullMatch(regex_node("(a)\\1"), "m"); }).find("invalid escape"),
            std::string::npos);
  EXPECT_EQ(error_of([] { RegexFullMatch(test::node_of("RegexFullMatch", {}), "m"); }),
            "m: the 'pattern' attribute is required");
  const RegexFullMatch re(regex_node("a"), "m");
  const EngineValue numbers = EngineValue::of(Tensor(DType::F32, {2}));
  EXPECT_EQ(error_of([&] { re.run({&numbers}, 1 << 20); }), "m: X must be strings, got float32[2]");
  EXPECT_EQ(error_of([&] { re.run({nullptr}, 1 << 20); }), "m: missing required input 0");
}

// regex.onnx (make_fixtures.py): the match, then a compiled count of the matches.
TEST(RegexFullMatchTest, TheEngineRunsItAndRefusesABadPatternAtLoad) {
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "regex.onnx", EngineOptions());
  const Tensor in({4}, {"ann@example.com", "x@y.net", "bob@ferrite.org", "no"});
  std::vector<Tensor> out = e->run({{"text", &in}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::vector<uint8_t>(out[0].as<uint8_t>(), out[0].as<uint8_t>() + 4),
            (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(out[1].as<int64_t>()[0], 2);
  const std::string error =
      error_of([] { Engine::from_file(kFixtures + "regex_invalid.onnx", EngineOptions()); });
  EXPECT_NE(error.find("RegexFullMatch 'match': invalid pattern '[a-z'"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace ferrite
