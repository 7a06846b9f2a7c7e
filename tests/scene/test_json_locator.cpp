#include <string>

#include <doctest/doctest.h>

#include "bristle/scene/json_locator.hpp"

using namespace bristle;

TEST_CASE("scene: JsonLocator maps pointers to the line where each value starts") {
  const std::string text =
      "{\n"                                            // 1
      "  \"format\": \"bristle-scene/1\",\n"           // 2
      "  \"time\": {\"dt\": 0.001,\n"                  // 3
      "           \"duration\": 2},\n"                 // 4
      "  \"rods\": [\n"                                // 5
      "    {\"name\": \"a\\\"b\", \"vertices\": [\n"   // 6
      "       [0, 0, 0],\n"                            // 7
      "       [1,\n"                                   // 8
      "        2, 3]\n"                                // 9
      "    ]},\n"                                      // 10
      "    {}, [], \"x\\n,]}\"\n"                      // 11
      "  ],\n"                                         // 12
      "  \"a/b~c\": {\"\\u00e9\": true}\n"             // 13
      "}\n";
  const JsonLocator locator(text);
  CHECK(locator.line_of("") == 1);
  CHECK(locator.line_of("/format") == 2);
  CHECK(locator.line_of("/time") == 3);
  CHECK(locator.line_of("/time/dt") == 3);
  CHECK(locator.line_of("/time/duration") == 4);
  CHECK(locator.line_of("/rods") == 5);
  CHECK(locator.line_of("/rods/0") == 6);
  CHECK(locator.line_of("/rods/0/name") == 6);
  CHECK(locator.line_of("/rods/0/vertices") == 6);
  CHECK(locator.line_of("/rods/0/vertices/0") == 7);
  CHECK(locator.line_of("/rods/0/vertices/0/2") == 7);  // inline scalar: its array's line
  CHECK(locator.line_of("/rods/0/vertices/1") == 8);
  CHECK(locator.line_of("/rods/0/vertices/1/0") == 8);
  CHECK(locator.line_of("/rods/0/vertices/1/1") == 9);  // a scalar on a line of its own
  CHECK(locator.line_of("/rods/0/vertices/1/2") == 9);
  // Delimiters inside strings do not confuse the scan.
  CHECK(locator.line_of("/rods/1") == 11);
  CHECK(locator.line_of("/rods/2") == 11);
  CHECK(locator.line_of("/rods/3") == 11);
  // Keys are decoded and escaped as RFC 6901 pointers ("/" -> "~1", "~" -> "~0").
  CHECK(locator.line_of("/a~1b~0c") == 13);
  CHECK(locator.line_of("/a~1b~0c/\xC3\xA9") == 13);
  // A missing key falls back to its nearest ancestor.
  CHECK(locator.line_of("/time/frame_dt") == 3);
  CHECK(locator.line_of("/rods/0/fixed/4") == 6);
  CHECK(locator.duplicate_keys().empty());
}

TEST_CASE("scene: JsonLocator reports keys given twice") {
  const JsonLocator locator("{\"time\": {\"dt\": 1,\n \"dt\": 2}, \"a\": {\"dt\": 3}}");
  REQUIRE(locator.duplicate_keys().size() == 1);
  CHECK(locator.duplicate_keys()[0] == "/time/dt");
  CHECK(locator.line_of("/time/dt") == 2);  // the value JSON keeps: the last
}

TEST_CASE("scene: JsonLocator survives malformed and deeply nested text") {
  const JsonLocator truncated("{\"a\": [1,\n 2");
  CHECK(truncated.line_of("/a") == 1);
  CHECK(truncated.line_of("/a/1") == 2);
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const JsonLocator nested(deep);
  CHECK(nested.line_of("/0/0/0") == 1);
  CHECK(JsonLocator("").line_of("/x") == 0);
  CHECK(JsonLocator("\xEF\xBB\xBF{\n\"a\": 1}").line_of("/a") == 2);  // byte order mark
}

TEST_CASE("scene: text_position turns a byte offset into line and column") {
  const std::string text = "ab\ncd\n\nef";
  CHECK(text_position(text, 0).line == 1);
  CHECK(text_position(text, 0).column == 1);
  CHECK(text_position(text, 2).column == 3);  // the newline itself ends line 1
  CHECK(text_position(text, 3).line == 2);
  CHECK(text_position(text, 4).column == 2);
  CHECK(text_position(text, 6).line == 3);
  CHECK(text_position(text, 8).line == 4);
  CHECK(text_position(text, 8).column == 2);
  CHECK(text_position(text, 100).line == 4);  // past the end: just after the last byte
  CHECK(text_position(text, 100).column == 3);
}

TEST_CASE("scene: pointer_append escapes RFC 6901 reference tokens") {
  CHECK(pointer_append("", std::string("rods")) == "/rods");
  CHECK(pointer_append("/rods", std::size_t{3}) == "/rods/3");
  CHECK(pointer_append("/materials", std::string("a/b~c")) == "/materials/a~1b~0c");
}
