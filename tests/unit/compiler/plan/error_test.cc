// Error messages are escaped as they are made (compiler/plan/error.h): names from models
// and plans are untrusted bytes, and no door may echo a terminal escape sequence, forge a
// line, or pass on invalid UTF-8.
#include "compiler/plan/error.h"

#include <gtest/gtest.h>

#include <string>

namespace ferrite {
namespace {

TEST(Printable, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(printable("node 'conv_1/Relu:0' [1,3]"), "node 'conv_1/Relu:0' [1,3]");
  // Two-, three- and four-byte sequences, at the ends of the range allowed for each.
  const std::string utf8 =
      "\xc3\xa9t\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xc2\xa0 \xef\xbf\xbf "
      "\xf4\x8f\xbf\xbf \xed\x9f\xbf";
  EXPECT_EQ(printable(utf8), utf8);
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, EscapesControlCharacters) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("line\nforged\r\tend"), "line\\nforged\\r\\tend");
  EXPECT_EQ(printable(std::string("nul\0bel\a del\x7f", 13)), "nul\\x00bel\\x07 del\\x7f");
  // C1 controls, valid UTF-8 but terminal commands (U+009B is CSI): escaped as code points.
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J \xc2\x85 \xc2\x80"),
            "\\u009b2J \\u0085 \\u0080");
  // Line separators and bidirectional overrides (they reorder what a line shows).
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b\xe2\x80\xae"
                      "c\xe2\x81\xa6"
                      "d\xe2\x81\xa9"),
            "a\\u2028b\\u202ec\\u2066d\\u2069");
  // Their neighbours are ordinary text: an em dash, a narrow no-break space, U+2065.
  const std::string kept = "\xe2\x80\x94\xe2\x80\xaf\xe2\x81\xa5";
  EXPECT_EQ(printable(kept), kept);
}

TEST(Printable, EscapesEachByteOfInvalidUtf8) {
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc3"), "\\xc3");                             // truncated at the end
  EXPECT_EQ(printable("\xc3(x"), "\\xc3(x");                         // bad continuation
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, 3 bytes
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("\x80 \xbf"), "\\x80 \\xbf");                  // lone continuations
}

TEST(Printable, IsIdempotent) {
  for (const std::string& s :
       {std::string("a\x1b[31m\xff\xc2\x9b\n\\x1b \xc3\xa9\\"), std::string("C:\\path\\n")}) {
    const std::string once = printable(s);
    EXPECT_EQ(printable(once), once) << once;
  }
}

TEST(Error, MessagesAreEscapedAtConstruction) {
  try {
    fail("node '", "\x1b[2J\x1b[H", "': bad attribute\n", "\xff");
    FAIL() << "fail() returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "node '\\x1b[2J\\x1b[H': bad attribute\\n\\xff");
  }
  // Subclasses and messages quoting other messages: escaped once.
  const UnsupportedError inner("op '\x07'");
  const Error outer(str_cat("model 'm.onnx': ", inner.what()));
  EXPECT_STREQ(inner.what(), "op '\\x07'");
  EXPECT_STREQ(outer.what(), "model 'm.onnx': op '\\x07'");
}

}  // namespace
}  // namespace ferrite
