#include "sources/kineto/gemm_shapes.h"

#include <algorithm>

#include "model/gemm.h"

namespace rooftrace::kineto {
namespace {

int64_t Product(const OpInput& t, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= t.dims[i];
  return p;
}

bool IsTensor(const OpInputs& in, int i, int min_rank = 1) {
  return i < in.count && in.in[i].rank >= min_rank;
}

// Row-major out[batch][M x N] = a[M x K] . b[K x N]: what every operator
// comes down to before it is put in cuBLAS's terms.
struct RowMajorGemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

// torch.matmul's rules (broadcast batch dimensions; a 1-D operand is a
// vector).
std::optional<RowMajorGemm> MatmulShape(const OpInput& a, const OpInput& b) {
  if (a.rank < 1 || b.rank < 1) return std::nullopt;
  RowMajorGemm g;
  const int64_t ak = a.dims[a.rank - 1];
  const int64_t bk = b.rank == 1 ? b.dims[0] : b.dims[b.rank - 2];
  if (ak != bk) return std::nullopt;
  g.k = ak;
  g.n = b.rank == 1 ? 1 : b.dims[b.rank - 1];
  if (b.rank <= 2) {
    g.m = Product(a, 0, a.rank - 1);  // batch dims of `a` fold into M
  } else {
    g.m = a.rank == 1 ? 1 : a.dims[a.rank - 2];
    g.batch = std::max(Product(a, 0, std::max(0, a.rank - 2)),
                       Product(b, 0, b.rank - 2));
  }
  return g;
}

// mm / addmm / bmm / baddbmm: exact ranks, inner dimensions equal.
std::optional<RowMajorGemm> FixedShape(const OpInput& a, const OpInput& b,
                                       int rank) {
  if (a.rank != rank || b.rank != rank) return std::nullopt;
  const int r = rank - 2;  // first matrix dimension
  if (a.dims[r + 1] != b.dims[r]) return std::nullopt;
  if (rank == 3 && a.dims[0] != b.dims[0]) return std::nullopt;
  RowMajorGemm g;
  g.m = a.dims[r];
  g.k = a.dims[r + 1];
  g.n = b.dims[r + 1];
  g.batch = rank == 3 ? a.dims[0] : 1;
  return g;
}

int64_t Elements(const OpInput& t) {
  return t.rank >= 0 ? Product(t, 0, t.rank) : 0;
}

}  // namespace

bool IsGemmOp(std::string_view name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" ||
         name == "aten::baddbmm" || name == "aten::matmul" ||
         name == "aten::linear" || name == "aten::_scaled_mm";
}

int32_t CudaTypeOfTorchType(std::string_view t) {
  namespace ct = cuda_type;
  if (t == "c10::BFloat16") return ct::kR16BF;
  if (t == "c10::Half") return ct::kR16F;
  if (t == "float") return ct::kR32F;
  if (t == "double") return ct::kR64F;
  if (t == "c10::Float8_e4m3fn" || t == "c10::Float8_e4m3fnuz") {
    return ct::kR8FE4M3;
  }
  if (t == "c10::Float8_e5m2" || t == "c10::Float8_e5m2fnuz") {
    return ct::kR8FE5M2;
  }
  if (t == "signed char") return ct::kR8I;
  if (t == "unsigned char") return ct::kR8U;
  if (t == "int") return ct::kR32I;
  if (t == "long int") return ct::kR64I;
  if (t == "short int") return ct::kR16I;
  return -1;
}

std::optional<GemmRecord> GemmOfOp(std::string_view name,
                                   const OpInputs& in, bool in_linear) {
  // Which inputs are the two matrices and the bias (-1: none).
  int a = 0, b = 1, bias = -1;
  std::optional<RowMajorGemm> g;
  bool weight_known = in_linear;
  if (name == "aten::addmm" || name == "aten::baddbmm") {
    a = 1, b = 2, bias = 0;
    weight_known = weight_known || name == "aten::addmm";
  } else if (name == "aten::_scaled_mm") {
    bias = IsTensor(in, 4) ? 4 : -1;
  } else if (name == "aten::linear") {
    bias = IsTensor(in, 2) ? 2 : -1;
    weight_known = true;
  }
  if (!IsTensor(in, a) || !IsTensor(in, b)) return std::nullopt;
  const OpInput& x = in.in[a];
  const OpInput& y = in.in[b];
  if (name == "aten::mm" || name == "aten::addmm" ||
      name == "aten::_scaled_mm") {
    g = FixedShape(x, y, 2);
  } else if (name == "aten::bmm" || name == "aten::baddbmm") {
    g = FixedShape(x, y, 3);
  } else if (name == "aten::matmul") {
    g = MatmulShape(x, y);
  } else if (name == "aten::linear") {
    // linear(x[..., K], w[N, K]) = x . w^T
    if (y.rank != 2 || x.dims[x.rank - 1] != y.dims[1]) return std::nullopt;
    g = RowMajorGemm{Product(x, 0, x.rank - 1), y.dims[0], y.dims[1], 1};
  }
  if (!g || g->m <= 0 || g->n <= 0 || g->k <= 0 || g->batch <= 0) {
    return std::nullopt;
  }
  GemmRecord r;
  r.m = g->n;  // cuBLAS computes out^T = op(w) . op(x)
  r.n = g->m;
  r.k = g->k;
  r.batch = g->batch;
  r.a_type = CudaTypeOfTorchType(y.type);
  r.b_type = CudaTypeOfTorchType(x.type);
  // The output has the input's type; _scaled_mm's is its out_dtype, which
  // the profiler does not record (-1: counted at the input's size).
  r.c_type = r.d_type = name == "aten::_scaled_mm" ? -1 : r.b_type;
  r.compute_type = -1;
  if (bias >= 0 && IsTensor(in, bias)) {
    r.bias_elements = Elements(in.in[bias]);
  }
  r.weight_operand = weight_known ? 1 : 0;
  return r;
}

}  // namespace rooftrace::kineto
