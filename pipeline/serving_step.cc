#include "pipeline/serving_step.h"

#include <cctype>
#include <map>
#include <string>

namespace rooftrace {
namespace {

// A cursor over an annotation: literal text and whole numbers in turn.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool Lit(std::string_view lit) {
    if (s_.substr(0, lit.size()) != lit) return false;
    s_.remove_prefix(lit.size());
    return true;
  }
  bool Int(int64_t* out) {
    size_t n = 0;
    int64_t v = 0;
    while (n < s_.size() && std::isdigit(static_cast<unsigned char>(s_[n]))) {
      if (v > (INT64_MAX - 9) / 10) return false;
      v = v * 10 + (s_[n] - '0');
      ++n;
    }
    if (n == 0) return false;
    s_.remove_prefix(n);
    *out = v;
    return true;
  }
  bool Done() const { return s_.empty(); }

 private:
  std::string_view s_;
};

// "(sq8155sk8430sqsq7475785sqsk7671310)"
bool Aggregates(Cursor& c, int64_t* sq, int64_t* sk, int64_t* sqsq,
                int64_t* sqsk) {
  return c.Lit("(sq") && c.Int(sq) && c.Lit("sk") && c.Int(sk) &&
         c.Lit("sqsq") && c.Int(sqsq) && c.Lit("sqsk") && c.Int(sqsk) &&
         c.Lit(")");
}

std::optional<ServingStep> VllmDetailed(std::string_view a) {
  Cursor c(a);
  ServingStep s;
  int64_t tokens = 0;
  if (!(c.Lit("execute_") && c.Int(&tokens) && c.Lit("_context_") &&
        c.Int(&s.context_requests) &&
        Aggregates(c, &s.c_sq, &s.c_sk, &s.c_sqsq, &s.c_sqsk) &&
        c.Lit("_generation_") && c.Int(&s.generation_requests) &&
        Aggregates(c, &s.g_sq, &s.g_sk, &s.g_sqsq, &s.g_sqsk) && c.Done())) {
    return std::nullopt;
  }
  s.has_aggregates = true;
  return s;
}

std::optional<ServingStep> VllmPlain(std::string_view a) {
  Cursor c(a);
  ServingStep s;
  if (!(c.Lit("execute_context_") && c.Int(&s.context_requests) &&
        c.Lit("(") && c.Int(&s.c_sq) && c.Lit(")_generation_") &&
        c.Int(&s.generation_requests) && c.Lit("(") && c.Int(&s.g_sq) &&
        c.Lit(")") && c.Done())) {
    return std::nullopt;
  }
  return s;
}

// "k=v k=v ..." with whole-number values (the first number of "117/128");
// other values ("[7803, 6918]") are skipped.
std::map<std::string, int64_t> KeyValues(std::string_view body) {
  std::map<std::string, int64_t> kv;
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && body[i] == ' ') ++i;
    const size_t key = i;
    while (i < body.size() && body[i] != '=' && body[i] != ' ') ++i;
    if (i >= body.size() || body[i] != '=') continue;
    const std::string k(body.substr(key, i - key));
    ++i;
    if (i < body.size() && body[i] == '[') {  // a list: skip it
      while (i < body.size() && body[i] != ']') ++i;
      while (i < body.size() && body[i] != ' ') ++i;
      continue;
    }
    Cursor c(body.substr(i));
    int64_t v = 0;
    if (c.Int(&v)) kv[k] = v;
    while (i < body.size() && body[i] != ' ') ++i;
  }
  return kv;
}

int64_t Get(const std::map<std::string, int64_t>& kv, const char* key,
            int64_t otherwise = 0) {
  auto it = kv.find(key);
  return it == kv.end() ? otherwise : it->second;
}

std::optional<ServingStep> Sglang(std::string_view a) {
  if (a.substr(0, 5) != "step[" || a.back() != ']') return std::nullopt;
  std::string_view body = a.substr(5, a.size() - 6);
  const size_t space = body.find(' ');
  const std::string_view mode = body.substr(0, space);
  const auto kv = KeyValues(
      space == std::string_view::npos ? std::string_view() : body.substr(space));
  if (!kv.count("bs")) return std::nullopt;
  const int64_t bs = kv.at("bs");
  ServingStep s;
  s.c_sq = Get(kv, "c_sq");
  s.c_sk = Get(kv, "c_sk");
  s.c_sqsq = Get(kv, "c_sqsq");
  s.c_sqsk = Get(kv, "c_sqsk");
  s.g_sq = Get(kv, "g_sq");
  s.g_sk = Get(kv, "g_sk");
  s.g_sqsq = Get(kv, "g_sqsq");
  s.g_sqsk = Get(kv, "g_sqsk");
  s.has_aggregates = kv.count("c_sqsq") || kv.count("g_sqsq");
  if (mode == "DECODE") {
    s.generation_requests = bs;
    if (!kv.count("g_sq")) s.g_sq = bs;  // one new token per request
  } else if (mode == "EXTEND") {
    s.context_requests = bs;
    if (!kv.count("c_sq")) s.c_sq = Get(kv, "toks");
  } else if (mode == "MIXED") {
    s.context_requests = Get(kv, "c", kv.count("g") ? 0 : bs);
    s.generation_requests = Get(kv, "g");
    if (!kv.count("c_sq")) s.c_sq = Get(kv, "toks");
  } else {
    return std::nullopt;
  }
  return s;
}

std::optional<ServingStep> Atom(std::string_view a) {
  const bool prefill = a.substr(0, 8) == "prefill[";
  const bool decode = a.substr(0, 7) == "decode[";
  if ((!prefill && !decode) || a.back() != ']') return std::nullopt;
  const size_t open = a.find('[');
  const auto kv = KeyValues(a.substr(open + 1, a.size() - open - 2));
  if (!kv.count("bs") || !kv.count("tok")) return std::nullopt;
  ServingStep s;
  s.has_aggregates = kv.count("sqsq") && kv.count("sqsk");
  if (prefill) {
    s.context_requests = kv.at("bs");
    s.c_sq = kv.at("tok");
    s.c_sk = Get(kv, "sk");
    s.c_sqsq = Get(kv, "sqsq");
    s.c_sqsk = Get(kv, "sqsk");
  } else {
    s.generation_requests = kv.at("bs");
    s.g_sq = kv.at("tok");
    s.g_sk = Get(kv, "sk");
    s.g_sqsq = Get(kv, "sqsq");
    s.g_sqsk = Get(kv, "sqsk");
  }
  return s;
}

// A group's aggregates hold together: every request has sq >= 1 and
// sk >= sq, so sk >= sq, sqsq >= sq and sqsk >= sqsq; no tokens, no sums.
bool Consistent(int64_t requests, int64_t sq, int64_t sk, int64_t sqsq,
                int64_t sqsk) {
  if (requests == 0 || sq == 0) return sk == 0 && sqsq == 0 && sqsk == 0;
  return sk >= sq && sqsq >= sq && sqsk >= sqsq;
}

}  // namespace

const ServingStep* InnermostStep(const ServingStep* inner,
                                 const ServingStep* outer) {
  if (inner == nullptr) return outer;
  if (inner->has_aggregates || outer == nullptr || !outer->has_aggregates) {
    return inner;
  }
  return outer;
}

std::optional<ServingStep> ParseServingStep(std::string_view annotation) {
  if (annotation.empty()) return std::nullopt;
  std::optional<ServingStep> s;
  if (annotation.substr(0, 16) == "execute_context_") {
    s = VllmPlain(annotation);
  } else if (annotation.substr(0, 8) == "execute_") {
    s = VllmDetailed(annotation);
  } else if (annotation.substr(0, 5) == "step[") {
    s = Sglang(annotation);
  } else {
    s = Atom(annotation);
  }
  if (!s || (s->context_requests == 0 && s->generation_requests == 0)) {
    return std::nullopt;
  }
  if (s->has_aggregates &&
      (!Consistent(s->context_requests, s->c_sq, s->c_sk, s->c_sqsq,
                   s->c_sqsk) ||
       !Consistent(s->generation_requests, s->g_sq, s->g_sk, s->g_sqsq,
                   s->g_sqsk))) {
    return std::nullopt;
  }
  return s;
}

}  // namespace rooftrace
