#include "lt_descriptors.hpp"

#include <cstdint>

#include "real_cublas.hpp"

namespace xgemv::cublas_dropin {
namespace {

// Reads attributes of one descriptor into typed fields through cuBLASLt's real getter of its
// kind (looked up once), remembering the first failure.
template <class Descriptor, class Attribute>
class AttributeReader {
 public:
  using Getter = cublasStatus_t (*)(Descriptor, Attribute, void *, size_t, size_t *);

  AttributeReader(const char *getter_name, Descriptor descriptor)
      : getter_(real_getter(getter_name)), descriptor_(descriptor) {}

  template <class Value>
  void read(Attribute attribute, Value *value) {
    if (ok_) ok_ = get(attribute, value, sizeof *value) == CUBLAS_STATUS_SUCCESS;
  }
  // An attribute that a cuBLASLt too old to know it leaves at its default.
  template <class Value>
  Value read_optional(Attribute attribute, Value fallback) {
    Value value = fallback;
    if (get(attribute, &value, sizeof value) != CUBLAS_STATUS_SUCCESS) value = fallback;
    return value;
  }
  bool ok() const { return ok_; }

 private:
  static const RealFunction<Getter> &real_getter(const char *name) {
    static const RealFunction<Getter> real(name, nullptr, RealLibrary::cublas_lt);
    return real;
  }
  cublasStatus_t get(Attribute attribute, void *value, size_t size) const noexcept {
    size_t written = 0;
    return getter_(descriptor_, attribute, value, size, &written);
  }

  const RealFunction<Getter> &getter_;
  Descriptor descriptor_;
  bool ok_ = true;
};

struct OperationReader : AttributeReader<cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t> {
  explicit OperationReader(cublasLtMatmulDesc_t operation)
      : AttributeReader("cublasLtMatmulDescGetAttribute", operation) {}
};
struct LayoutReader : AttributeReader<cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t> {
  explicit LayoutReader(cublasLtMatrixLayout_t layout)
      : AttributeReader("cublasLtMatrixLayoutGetAttribute", layout) {}
};

bool read_layout(cublasLtMatrixLayout_t descriptor, LtLayout *layout) {
  LayoutReader reader(descriptor);
  uint32_t type = 0;
  reader.read(CUBLASLT_MATRIX_LAYOUT_TYPE, &type);
  layout->type = static_cast<cudaDataType>(type);
  reader.read(CUBLASLT_MATRIX_LAYOUT_ORDER, &layout->order);
  reader.read(CUBLASLT_MATRIX_LAYOUT_ROWS, &layout->rows);
  reader.read(CUBLASLT_MATRIX_LAYOUT_COLS, &layout->cols);
  reader.read(CUBLASLT_MATRIX_LAYOUT_LD, &layout->ld);
  reader.read(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &layout->batch_count);
  reader.read(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &layout->batch_stride);
  reader.read(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &layout->plane_offset);
  layout->batch_mode = reader.read_optional(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, uint32_t{0});
  return reader.ok();
}

// The attributes xgemv does not implement, each served only at its default (a null pointer):
// the fp8 scaling and amax outputs, the auxiliary epilogue outputs, emulation settings.
struct PointerAttribute {
  cublasLtMatmulDescAttributes_t attribute;
  const char *set_reason;
};
constexpr PointerAttribute kUnservedPointers[] = {
    {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, "A scale pointer set"},
    {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, "B scale pointer set"},
    {CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, "C scale pointer set"},
    {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, "D scale pointer set"},
    {CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, "amax pointer set"},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, "epilogue aux pointer set"},
    {CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, "D out scale pointer set"},
    {CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, "emulation descriptor set"},
};

}  // namespace

std::optional<LtMatmul> read_lt_matmul(cublasLtMatmulDesc_t operation, const void *alpha,
                                       const void *a, cublasLtMatrixLayout_t a_layout,
                                       const void *b, cublasLtMatrixLayout_t b_layout,
                                       const void *beta, const void *c,
                                       cublasLtMatrixLayout_t c_layout, void *d,
                                       cublasLtMatrixLayout_t d_layout,
                                       const char **reason) noexcept {
  if (operation == nullptr || a_layout == nullptr || b_layout == nullptr ||
      c_layout == nullptr || d_layout == nullptr) {
    *reason = "NULL descriptor";
    return std::nullopt;
  }
  LtMatmul call;
  call.alpha = alpha;
  call.beta = beta;
  call.a = a;
  call.b = b;
  call.c = c;
  call.d = d;

  OperationReader reader(operation);
  int32_t value = 0;
  reader.read(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &value);
  call.compute_type = static_cast<cublasComputeType_t>(value);
  reader.read(CUBLASLT_MATMUL_DESC_SCALE_TYPE, &value);
  call.scale_type = static_cast<cudaDataType>(value);
  reader.read(CUBLASLT_MATMUL_DESC_POINTER_MODE, &call.pointer_mode);
  reader.read(CUBLASLT_MATMUL_DESC_TRANSA, &value);
  call.trans_a = static_cast<cublasOperation_t>(value);
  reader.read(CUBLASLT_MATMUL_DESC_TRANSB, &value);
  call.trans_b = static_cast<cublasOperation_t>(value);
  reader.read(CUBLASLT_MATMUL_DESC_TRANSC, &value);
  call.trans_c = static_cast<cublasOperation_t>(value);
  reader.read(CUBLASLT_MATMUL_DESC_FILL_MODE, &call.fill_mode);
  reader.read(CUBLASLT_MATMUL_DESC_EPILOGUE, &call.epilogue);
  reader.read(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &call.bias);
  reader.read(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &call.bias_batch_stride);
  reader.read(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &call.bias_type);
  for (const PointerAttribute &unserved : kUnservedPointers) {
    if (reader.read_optional(unserved.attribute, static_cast<const void *>(nullptr)) != nullptr) {
      call.unserved_attribute = unserved.set_reason;
      break;
    }
  }
  if (!reader.ok() || !read_layout(a_layout, &call.a_layout) ||
      !read_layout(b_layout, &call.b_layout) || !read_layout(c_layout, &call.c_layout) ||
      !read_layout(d_layout, &call.d_layout)) {
    *reason = "cannot read the descriptors";
    return std::nullopt;
  }
  return call;
}

}  // namespace xgemv::cublas_dropin
