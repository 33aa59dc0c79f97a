// A small XML 1.0 well-formedness checker for the analyzer's SVG and JUnit
// output: one root element, matched tags, quoted unique attributes, valid
// entity references, no stray '<' or '&'. Not a validating parser.
#ifndef ROOFTRACE_TESTS_SUPPORT_XML_CHECK_H_
#define ROOFTRACE_TESTS_SUPPORT_XML_CHECK_H_

#include <string>
#include <string_view>

namespace rooftrace::testing {

// Empty when `xml` is well-formed, else "line L: what is wrong".
// `root` receives the root element's name.
std::string CheckXmlWellFormed(std::string_view xml, std::string* root = nullptr);

// Number of start tags named `name` (for structural assertions).
int CountElements(std::string_view xml, std::string_view name);

}  // namespace rooftrace::testing

#endif  // ROOFTRACE_TESTS_SUPPORT_XML_CHECK_H_
