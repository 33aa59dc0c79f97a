#include "base/url_secrets.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace rooftrace {
namespace {

using Span = std::pair<size_t, size_t>;

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)); }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX sequences decoded; a '%' that starts none is kept (libpq refuses the
// URL then, and its message is masked like any other text).
std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
        HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void AddSpan(std::string_view text, size_t begin, size_t end,
             std::vector<Span>* spans) {
  // A value masked already ("***") ends there: a message that quotes a
  // masked URL (`URL: cannot connect`) keeps the punctuation after it.
  if (text.substr(begin, 3) == "***") end = std::min(end, begin + 3);
  if (end > begin) spans->emplace_back(begin, end);
}

// The URL that starts at `pos` (its scheme `scheme_len` long).
void AddUrlSpans(std::string_view text, size_t pos, size_t scheme_len,
                 bool whole_url, std::vector<Span>* spans) {
  const size_t start = pos + scheme_len;
  size_t end = text.size();
  if (!whole_url) {
    for (size_t i = start; i < text.size(); ++i) {
      if (IsSpace(text[i]) || text[i] == '"') {
        end = i;
        break;
      }
    }
  }
  size_t query = text.find('?', start);
  if (query == std::string_view::npos || query > end) query = end;
  // user:password@ : up to the last '@' of the part before the query.
  const std::string_view head = text.substr(start, query - start);
  const size_t at = head.rfind('@');
  if (at != std::string_view::npos) {
    const size_t colon = head.find(':');
    if (colon != std::string_view::npos && colon < at) {
      AddSpan(text, start + colon + 1, start + at, spans);
    }
  }
  // ?...&password=...&...
  size_t p = query + 1;
  while (p < end) {
    size_t amp = text.find('&', p);
    if (amp == std::string_view::npos || amp > end) amp = end;
    const std::string_view param = text.substr(p, amp - p);
    const size_t eq = param.find('=');
    if (eq != std::string_view::npos &&
        PercentDecode(param.substr(0, eq)) == "password") {
      AddSpan(text, p + eq + 1, amp, spans);
    }
    p = amp + 1;
  }
}

// password=VALUE, password = 'VALUE' as a key-value string writes it.
void AddKeyValueSpans(std::string_view text, std::vector<Span>* spans) {
  constexpr std::string_view kKey = "password";
  for (size_t p = text.find(kKey); p != std::string_view::npos;
       p = text.find(kKey, p + 1)) {
    if (p > 0 && (std::isalnum(static_cast<unsigned char>(text[p - 1])) ||
                  text[p - 1] == '_')) {
      continue;  // another word that ends in "password"
    }
    size_t i = p + kKey.size();
    while (i < text.size() && IsSpace(text[i])) ++i;
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    while (i < text.size() && IsSpace(text[i])) ++i;
    if (i < text.size() && text[i] == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != '\'') j += text[j] == '\\' ? 2 : 1;
      AddSpan(text, i + 1, std::min(j, text.size()), spans);
      continue;
    }
    size_t j = i;
    while (j < text.size() && !IsSpace(text[j]) && text[j] != '&' &&
           text[j] != '"') {
      ++j;
    }
    AddSpan(text, i, j, spans);
  }
}

}  // namespace

std::vector<Span> PasswordSpans(std::string_view text, bool whole_url) {
  std::vector<Span> spans;
  for (const std::string_view scheme : {"postgresql://", "postgres://"}) {
    for (size_t p = text.find(scheme); p != std::string_view::npos;
         p = text.find(scheme, p + 1)) {
      AddUrlSpans(text, p, scheme.size(), whole_url, &spans);
    }
  }
  AddKeyValueSpans(text, &spans);
  std::sort(spans.begin(), spans.end());
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, s.second);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

std::string HidePasswords(std::string_view text, bool whole_url) {
  std::string out;
  size_t from = 0;
  for (const Span& s : PasswordSpans(text, whole_url)) {
    out.append(text.substr(from, s.first - from));
    out += "***";
    from = s.second;
  }
  out.append(text.substr(from));
  return out;
}

std::vector<std::string> UrlPasswords(std::string_view url) {
  std::vector<std::string> out;
  for (const Span& s : PasswordSpans(url, true)) {
    const std::string_view raw = url.substr(s.first, s.second - s.first);
    out.emplace_back(raw);
    const std::string decoded = PercentDecode(raw);
    if (decoded != raw) out.push_back(decoded);
  }
  return out;
}

std::string RemoveSecrets(std::string text,
                          const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t p = text.find(secret); p != std::string::npos;
         p = text.find(secret, p + 3)) {
      text.replace(p, secret.size(), "***");
    }
  }
  // A quoted piece of a password: libpq took part of a malformed URL's
  // password for a host or a port and quotes it ("u:pa" of u:pa/ss@h).
  for (size_t open = text.find('"'); open != std::string::npos;) {
    const size_t close = text.find('"', open + 1);
    if (close == std::string::npos) break;
    const std::string quoted = text.substr(open + 1, close - open - 1);
    bool part = false;
    for (const std::string& secret : secrets) {
      part |= !quoted.empty() && !secret.empty() &&
              (secret.find(quoted) != std::string::npos ||
               quoted.find(secret) != std::string::npos);
    }
    if (part) {
      text.replace(open + 1, quoted.size(), "***");
      open = text.find('"', open + 5);
    } else {
      open = text.find('"', close + 1);
    }
  }
  return text;
}

void ScrubPasswordsFromArgs(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == nullptr) continue;
    for (const Span& s : PasswordSpans(argv[i], true)) {
      std::memset(argv[i] + s.first, '*', s.second - s.first);
    }
  }
}

}  // namespace rooftrace
