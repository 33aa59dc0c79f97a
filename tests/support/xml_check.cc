#include "tests/support/xml_check.h"

#include <cctype>
#include <set>
#include <vector>

namespace rooftrace::testing {
namespace {

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool NameChar(char c) {
  return NameStart(c) || std::isdigit(static_cast<unsigned char>(c)) ||
         c == '-' || c == '.';
}

class Checker {
 public:
  explicit Checker(std::string_view s) : s_(s) {}

  std::string Run(std::string* root) {
    std::vector<std::string> stack;
    bool seen_root = false;
    while (i_ < s_.size()) {
      if (s_[i_] == '<') {
        if (Starts("<?")) {
          const size_t end = s_.find("?>", i_);
          if (end == std::string_view::npos) return Err("unterminated <?");
          i_ = end + 2;
        } else if (Starts("<!--")) {
          const size_t end = s_.find("-->", i_ + 4);
          if (end == std::string_view::npos) return Err("unterminated comment");
          i_ = end + 3;
        } else if (Starts("<!DOCTYPE")) {
          const size_t end = s_.find('>', i_);
          if (end == std::string_view::npos) return Err("unterminated DOCTYPE");
          i_ = end + 1;
        } else if (Starts("</")) {
          i_ += 2;
          const std::string name = Name();
          if (name.empty()) return Err("bad end tag name");
          SkipSpace();
          if (i_ >= s_.size() || s_[i_] != '>') return Err("bad end tag " + name);
          ++i_;
          if (stack.empty() || stack.back() != name) {
            return Err("end tag </" + name + "> does not match <" +
                       (stack.empty() ? std::string("nothing") : stack.back()) +
                       ">");
          }
          stack.pop_back();
        } else {
          ++i_;
          const std::string name = Name();
          if (name.empty()) return Err("bad start tag name");
          if (stack.empty()) {
            if (seen_root) return Err("second root element <" + name + ">");
            seen_root = true;
            if (root) *root = name;
          }
          std::set<std::string> attrs;
          bool self_closing = false;
          while (true) {
            SkipSpace();
            if (i_ >= s_.size()) return Err("unterminated tag <" + name + ">");
            if (s_[i_] == '>') { ++i_; break; }
            if (Starts("/>")) { i_ += 2; self_closing = true; break; }
            const std::string attr = Name();
            if (attr.empty()) return Err("bad attribute in <" + name + ">");
            if (!attrs.insert(attr).second) {
              return Err("duplicate attribute " + attr + " in <" + name + ">");
            }
            SkipSpace();
            if (i_ >= s_.size() || s_[i_] != '=') {
              return Err("attribute " + attr + " without value");
            }
            ++i_;
            SkipSpace();
            if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) {
              return Err("unquoted attribute " + attr);
            }
            const char q = s_[i_++];
            while (i_ < s_.size() && s_[i_] != q) {
              if (s_[i_] == '<') return Err("'<' in attribute " + attr);
              if (s_[i_] == '&') {
                std::string e = Entity();
                if (!e.empty()) return e;
              } else {
                ++i_;
              }
            }
            if (i_ >= s_.size()) return Err("unterminated attribute " + attr);
            ++i_;
          }
          if (!self_closing) stack.push_back(name);
        }
      } else if (s_[i_] == '&') {
        std::string e = Entity();
        if (!e.empty()) return e;
      } else {
        if (stack.empty() && !std::isspace(static_cast<unsigned char>(s_[i_]))) {
          return Err("text outside the root element");
        }
        if (s_[i_] == '\n') ++line_;
        ++i_;
      }
    }
    if (!stack.empty()) return Err("unclosed <" + stack.back() + ">");
    if (!seen_root) return Err("no root element");
    return "";
  }

 private:
  bool Starts(std::string_view p) const { return s_.substr(i_, p.size()) == p; }
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) {
      if (s_[i_] == '\n') ++line_;
      ++i_;
    }
  }
  std::string Name() {
    const size_t start = i_;
    if (i_ < s_.size() && NameStart(s_[i_])) {
      ++i_;
      while (i_ < s_.size() && NameChar(s_[i_])) ++i_;
    }
    return std::string(s_.substr(start, i_ - start));
  }
  std::string Entity() {
    const size_t semi = s_.find(';', i_);
    if (semi == std::string_view::npos || semi - i_ > 10) return Err("raw '&'");
    const std::string_view e = s_.substr(i_ + 1, semi - i_ - 1);
    const bool named = e == "amp" || e == "lt" || e == "gt" || e == "quot" ||
                       e == "apos";
    bool numeric = e.size() > 1 && e[0] == '#';
    for (size_t k = 1; numeric && k < e.size(); ++k) {
      numeric = std::isxdigit(static_cast<unsigned char>(e[k])) ||
                (k == 1 && e[k] == 'x');
    }
    if (!named && !numeric) return Err("unknown entity &" + std::string(e) + ";");
    i_ = semi + 1;
    return "";
  }
  std::string Err(const std::string& what) const {
    return "line " + std::to_string(line_) + ": " + what;
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
};

}  // namespace

std::string CheckXmlWellFormed(std::string_view xml, std::string* root) {
  return Checker(xml).Run(root);
}

int CountElements(std::string_view xml, std::string_view name) {
  int n = 0;
  const std::string open = "<" + std::string(name);
  for (size_t p = xml.find(open); p != std::string_view::npos;
       p = xml.find(open, p + 1)) {
    const size_t after = p + open.size();
    if (after < xml.size() && (xml[after] == ' ' || xml[after] == '>' ||
                               xml[after] == '/' || xml[after] == '\n')) {
      ++n;
    }
  }
  return n;
}

}  // namespace rooftrace::testing
