#include "model/kernel_names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <vector>

namespace rooftrace {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(0, p.size()) == p;
}

bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// "(anonymous namespace)" would otherwise read as a parameter list.
std::string ReplaceAnonymous(std::string_view name) {
  static constexpr std::string_view kAnon = "(anonymous namespace)";
  std::string out;
  out.reserve(name.size());
  size_t i = 0;
  while (i < name.size()) {
    if (name.substr(i, kAnon.size()) == kAnon) {
      out += "{anon}";
      i += kAnon.size();
    } else {
      out.push_back(name[i++]);
    }
  }
  return out;
}

// Drops template arguments, the parameter list and a leading return type:
// "void ns::k<float, 4>(float*)" -> "ns::k". Template arguments may hold
// parenthesised expressions whose '>' is a comparison, not a bracket
// ("std::enable_if<((8)>(0)), void>::type vllm::k<...>(...)"): inside
// template arguments, '<' and '>' count only outside parentheses.
std::string StripSignature(std::string_view raw) {
  const std::string name = ReplaceAnonymous(raw);
  std::string out;
  int angle = 0;
  int paren = 0;  // parentheses open inside template arguments
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (angle > 0 && c == '(') {
      ++paren;
    } else if (angle > 0 && c == ')') {
      if (paren > 0) --paren;
    } else if (paren > 0) {
      continue;
    } else if (c == '<') {
      ++angle;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (c == '(' && angle == 0) {
      break;
    } else if (angle == 0) {
      out.push_back(c);
    }
  }
  // Drop a leading return type ("void ").
  while (!out.empty() && out.back() == ' ') out.pop_back();
  const size_t space = out.rfind(' ');
  if (space != std::string::npos) out = out.substr(space + 1);
  return out;
}

// The text between the outermost '<' and its matching '>' of the first
// templated name (empty when there is none).
std::string_view OuterTemplateArgs(std::string_view name) {
  const size_t open = name.find('<');
  if (open == std::string_view::npos) return {};
  int depth = 0;
  int paren = 0;  // a '>' inside parentheses is a comparison
  for (size_t i = open; i < name.size(); ++i) {
    if (name[i] == '(') ++paren;
    if (name[i] == ')' && paren > 0) --paren;
    if (paren > 0) continue;
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && --depth == 0) {
      return name.substr(open + 1, i - open - 1);
    }
  }
  return name.substr(open + 1);
}

// First top-level template argument: "a<b, c>, d" -> "a<b, c>".
std::string_view FirstTemplateArg(std::string_view args) {
  int depth = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == '<' || args[i] == '(') ++depth;
    if (args[i] == '>' || args[i] == ')') --depth;
    if (args[i] == ',' && depth == 0) return args.substr(0, i);
  }
  return args;
}

std::vector<std::string_view> SplitUnderscore(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '_') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// A token that describes a launch variant rather than the algorithm: tile
// shapes ("128x128", "64x3"), stage/alignment/layout suffixes.
bool IsVariantToken(std::string_view t) {
  if (t.empty()) return true;
  for (size_t i = 1; i + 1 < t.size(); ++i) {
    if (t[i] == 'x' && std::isdigit(static_cast<unsigned char>(t[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
      return true;
    }
  }
  static constexpr std::string_view kPrefixes[] = {
      "tilesize", "stages", "align", "warpgroupsize", "ldg", "splitk",
      "execute", "cublas", "relu", "gelu", "bias", "epilogue"};
  for (std::string_view p : kPrefixes) {
    if (StartsWith(t, p)) return true;
  }
  return t == "nn" || t == "nt" || t == "tn" || t == "tt";
}

// The token that names the algorithm of a SASS library kernel.
bool IsAlgorithmToken(std::string_view t) {
  return Contains(t, "gemm") || Contains(t, "gemv") || Contains(t, "conv") ||
         t == "fprop" || t == "dgrad" || t == "wgrad";
}

// Plain (unmangled, untemplated) names of NVIDIA library kernels that encode
// the launch variant in underscore-separated tokens.
bool IsLibrarySassName(std::string_view s) {
  if (Contains(s, "::") || Contains(s, "<") || Contains(s, "(")) return false;
  static constexpr std::string_view kPrefixes[] = {
      "ampere_", "volta_", "turing_", "maxwell_", "hopper_", "blackwell_",
      "cutlass_", "cutlass3x_", "nvjet_", "xmma_"};
  for (std::string_view p : kPrefixes) {
    if (StartsWith(s, p)) return true;
  }
  // sm80_xmma_gemm_..., sm90_xmma_gemm_..., sm100_...
  if (StartsWith(s, "sm") && s.size() > 3 &&
      std::isdigit(static_cast<unsigned char>(s[2]))) {
    return true;
  }
  return false;
}

// "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn" ->
// "ampere_bf16_s16816gemm"; "nvjet_tst_128x64_64x6_1x1_v_bz_TNT" ->
// "nvjet_tst".
std::string LibrarySassFamily(std::string_view s) {
  const std::vector<std::string_view> tokens = SplitUnderscore(s);
  size_t keep = tokens.size();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (IsAlgorithmToken(tokens[i])) {
      keep = i + 1;
      break;
    }
  }
  if (keep == tokens.size()) {
    // No algorithm token: cut at the first variant token (keep at least 2).
    for (size_t i = 2; i < tokens.size(); ++i) {
      if (IsVariantToken(tokens[i])) {
        keep = i;
        break;
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < keep; ++i) {
    if (i) out.push_back('_');
    out.append(tokens[i]);
  }
  return out;
}

// Triton (inductor) kernels end in a per-graph index: "triton_poi_fused_add_0"
// and "triton_poi_fused_add_3" are the same fused operation.
std::string TritonFamily(std::string_view s) {
  std::string out(s);
  size_t end = out.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(out[end - 1]))) {
    --end;
  }
  if (end < out.size() && end > 0 && out[end - 1] == '_') {
    out.resize(end - 1);
  }
  return out;
}

// The operation a PyTorch elementwise kernel applies, from its template
// arguments: a functor ("CUDAFunctor_add", "AUnaryFunctor") or the launching
// function of a lambda ("silu_kernel(at::TensorIteratorBase&)").
std::string ElementwiseOp(std::string_view args) {
  const std::string text = ReplaceAnonymous(args);
  // Lambda: "...::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}...".
  const size_t iter = text.find("(at::TensorIterator");
  if (iter != std::string::npos) {
    size_t begin = iter;
    while (begin > 0 &&
           (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
            text[begin - 1] == '_')) {
      --begin;
    }
    if (begin < iter) return text.substr(begin, iter - begin);
  }
  // Functor: the first identifier containing "Functor".
  const size_t functor = text.find("Functor");
  if (functor != std::string::npos) {
    size_t begin = functor;
    while (begin > 0 &&
           (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
            text[begin - 1] == '_')) {
      --begin;
    }
    size_t end = functor;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) ||
            text[end] == '_')) {
      ++end;
    }
    std::string op = text.substr(begin, end - begin);
    // "BinaryFunctor<float, float, float, at::native::MulFunctor<float>>":
    // the innermost functor names the operation.
    const size_t inner = text.find("Functor", end);
    if (StartsWith(op, "BinaryFunctor") || StartsWith(op, "AUnaryFunctor") ||
        StartsWith(op, "BUnaryFunctor")) {
      if (inner != std::string::npos) {
        size_t b = inner;
        while (b > 0 &&
               (std::isalnum(static_cast<unsigned char>(text[b - 1])) ||
                text[b - 1] == '_')) {
          --b;
        }
        size_t e = inner;
        while (e < text.size() &&
               (std::isalnum(static_cast<unsigned char>(text[e])) ||
                text[e] == '_')) {
          ++e;
        }
        op = text.substr(b, e - b);
      }
    }
    return op;
  }
  return "";
}

// When the demangler rejects a name, the qualified name can still be read
// from its mangled prefix: "_Z23silu_and_mul_kernelI..." -> "silu_and_mul_kernel",
// "_ZN2at6native8my_kernE..." -> "at::native::my_kern". Empty when the name
// does not start that way.
std::string MangledBaseName(std::string_view m) {
  if (!StartsWith(m, "_Z")) return "";
  size_t i = 2;
  const bool nested = i < m.size() && m[i] == 'N';
  if (nested) ++i;
  std::string out;
  while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i]))) {
    size_t len = 0;
    while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i]))) {
      len = len * 10 + static_cast<size_t>(m[i] - '0');
      ++i;
      if (len > m.size()) return "";
    }
    if (len == 0 || i + len > m.size()) return "";
    if (!out.empty()) out += "::";
    out.append(m.substr(i, len));
    i += len;
    if (!nested) break;
  }
  return out;
}

// The demangled name, or a readable base name when demangling fails.
std::string Readable(std::string_view name) {
  std::string demangled = Demangle(name);
  if (demangled == name && StartsWith(name, "_Z")) {
    std::string base = MangledBaseName(name);
    if (!base.empty()) return base;
  }
  return demangled;
}

// Wrappers whose first template argument is the real kernel.
bool IsKernelWrapper(std::string_view stripped) {
  return stripped == "cutlass::Kernel" || stripped == "cutlass::Kernel2" ||
         stripped == "cutlass::device_kernel";
}

}  // namespace

std::string Demangle(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') {
    return std::string(mangled);
  }
  int status = 0;
  std::string input(mangled);
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status),
      std::free);
  if (status != 0 || !out) return input;
  return out.get();
}

std::string KernelFamily(std::string_view name) {
  const std::string demangled = Readable(name);
  std::string stripped = StripSignature(demangled);
  if (stripped.empty()) return demangled;

  // cutlass::Kernel2<cutlass_80_tensorop_..._64x64_64x4_tn_align8>(...) and
  // cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>(...): the wrapped
  // kernel is the family.
  if (IsKernelWrapper(stripped)) {
    const std::string_view inner =
        FirstTemplateArg(OuterTemplateArgs(demangled));
    std::string inner_name = StripSignature(inner);
    // A wrapped type may carry qualifiers ("struct X"): keep the last word.
    if (!inner_name.empty()) stripped = inner_name;
  }

  if (IsLibrarySassName(stripped)) return LibrarySassFamily(stripped);
  if (StartsWith(stripped, "triton_")) return TritonFamily(stripped);

  // PyTorch's elementwise launchers (vectorized_, unrolled_, plain
  // elementwise_kernel and their _with_index variants) are one family per
  // operation.
  if (StartsWith(stripped, "at::native::") &&
      Contains(stripped, "elementwise_kernel")) {
    const std::string op = ElementwiseOp(OuterTemplateArgs(demangled));
    std::string family = "at::native::elementwise_kernel";
    if (!op.empty()) family += "<" + op + ">";
    return family;
  }
  return stripped;
}

std::string ShortKernelName(std::string_view name, size_t max_chars) {
  const std::string demangled = Readable(name);
  std::string s = StripSignature(demangled);
  if (s.empty()) s = demangled;
  if (IsKernelWrapper(s)) {
    std::string inner =
        StripSignature(FirstTemplateArg(OuterTemplateArgs(demangled)));
    if (!inner.empty()) s = inner;
  }
  if (StartsWith(s, "at::native::") && Contains(s, "elementwise_kernel")) {
    const std::string op = ElementwiseOp(OuterTemplateArgs(demangled));
    if (!op.empty()) s += "<" + op + ">";
  }
  if (s.size() > max_chars && max_chars > 3) {
    // Keep the start (namespace, algorithm) and the end (the variant), which
    // is where kernels of one family differ.
    const size_t head = (max_chars - 3) * 2 / 3;
    const size_t tail = max_chars - 3 - head;
    s = s.substr(0, head) + "..." + s.substr(s.size() - tail);
  }
  return s;
}

}  // namespace rooftrace
