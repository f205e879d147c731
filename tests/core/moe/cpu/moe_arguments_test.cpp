// xgemv_moe.h without a GPU: the checks of the experts and of the calls, in the order the
// header gives, all before the handle's (a NULL handle, which comes last), and the workspace's
// size. Pointers here are never dereferenced: every call fails its checks first.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <xgemv/xgemv_moe.h>

// c_caller.c: xgemv_moe_up with an activation passed as a C int.
extern "C" xgemv_status moe_up_from_c(xgemv_experts experts, const xgemv_moe_routing *routing,
                                      int activation, const void *x, int64_t ldx, void *h,
                                      int64_t ldh);

namespace {

// A 256-byte aligned address no call reads.
const void *fake_device_pointer() { return reinterpret_cast<const void *>(uintptr_t(1) << 20); }

class OwnedExperts {
 public:
  OwnedExperts(int64_t count, int64_t outputs, int64_t inputs) {
    status = xgemv_experts_create(&experts, XGEMV_R_16BF, count, outputs, inputs,
                                  fake_device_pointer(), inputs, outputs * inputs);
  }
  explicit OwnedExperts(const xgemv_qweight_info &info, int64_t count = 4) {
    status = xgemv_experts_create_quantized(&experts, &info, count, fake_device_pointer());
  }
  ~OwnedExperts() { xgemv_experts_destroy(experts); }
  xgemv_experts experts = nullptr;
  xgemv_status status;
};

TEST(MoeArguments, DenseExpertsAreCheckedInOrder) {
  xgemv_experts e = nullptr;
  const void *w = fake_device_pointer();
  EXPECT_EQ(xgemv_experts_create(nullptr, XGEMV_R_16BF, 4, 8, 8, w, 8, 64), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16BF, 4, 8, 8, nullptr, 8, 64), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_32F, 4, 8, 8, w, 8, 64), XGEMV_STATUS_INVALID_VALUE);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 0, 8, 8, w, 8, 64), XGEMV_STATUS_INVALID_QSHAPE);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 8193, 8, 8, w, 8, 64), XGEMV_STATUS_INVALID_QSHAPE);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 4, 0, 8, w, 8, 64), XGEMV_STATUS_INVALID_QSHAPE);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 4, 8, int64_t(1) << 31, w, int64_t(1) << 31, 0),
            XGEMV_STATUS_INVALID_QSHAPE);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 4, 8, 8, w, 7, 64), XGEMV_STATUS_INVALID_LDA);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 4, 8, 8, w, 8, 63), XGEMV_STATUS_INVALID_LDA);
  // outputs * ld past int64: refused, not wrapped around.
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 4, 8, 8, w, int64_t(1) << 61, 64),
            XGEMV_STATUS_INVALID_LDA);
  EXPECT_EQ(e, nullptr);
  EXPECT_EQ(xgemv_experts_create(&e, XGEMV_R_16F, 4, 8, 8, w, 9, 80), XGEMV_STATUS_SUCCESS);
  xgemv_experts_destroy(e);
}

TEST(MoeArguments, QuantizedExpertsAreCheckedInOrder) {
  const xgemv_qweight_info info{XGEMV_QFORMAT_INT4, XGEMV_R_16BF, XGEMV_R_16F, 64, 256, 128, 0, 0};
  EXPECT_EQ(OwnedExperts(info).status, XGEMV_STATUS_SUCCESS);
  xgemv_qweight_info bad = info;
  bad.group_size = 48;
  EXPECT_EQ(OwnedExperts(bad).status, XGEMV_STATUS_INVALID_GROUP_SIZE);
  EXPECT_EQ(OwnedExperts(info, 0).status, XGEMV_STATUS_INVALID_QSHAPE);
  bad = info;
  bad.permuted = 1;
  EXPECT_EQ(OwnedExperts(bad).status, XGEMV_STATUS_INVALID_QFORMAT);
  xgemv_experts e = nullptr;
  EXPECT_EQ(xgemv_experts_create_quantized(&e, &info, 4,
                                           static_cast<const char *>(fake_device_pointer()) + 16),
            XGEMV_STATUS_MISALIGNED);
  EXPECT_EQ(xgemv_experts_create_quantized(&e, &info, 4, nullptr), XGEMV_STATUS_NULL_POINTER);
}

// xgemv_moe_up / _down with a NULL handle: the argument checks' status, or INVALID_HANDLE.
xgemv_status up(xgemv_experts experts, const xgemv_moe_routing &r, xgemv_moe_activation a,
                int64_t ldx, int64_t ldh) {
  return xgemv_moe_up(nullptr, experts, &r, a, 1.702f, 7.0f, nullptr, fake_device_pointer(), ldx,
                      const_cast<void *>(fake_device_pointer()), ldh);
}
xgemv_status down(xgemv_experts experts, const xgemv_moe_routing &r, int64_t ldh, int64_t ldy,
                  void *workspace, size_t bytes) {
  return xgemv_moe_down(nullptr, experts, &r, nullptr, fake_device_pointer(), ldh, 0,
                        const_cast<void *>(fake_device_pointer()), ldy, workspace, bytes);
}

TEST(MoeArguments, CallsAreCheckedBeforeTheHandle) {
  const OwnedExperts dense(8, 64, 32);  // 64 rows of 32 inputs
  ASSERT_EQ(dense.status, XGEMV_STATUS_SUCCESS);
  const void *ids = fake_device_pointer();
  const xgemv_moe_routing r{3, 2, ids, XGEMV_R_32I, ids, XGEMV_R_32F};
  EXPECT_EQ(xgemv_moe_up(nullptr, nullptr, &r, XGEMV_MOE_SWIGLU, 0, 0, nullptr, ids, 32, nullptr, 32),
            XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_moe_up(nullptr, dense.experts, nullptr, XGEMV_MOE_SWIGLU, 0, 0, nullptr, ids, 32,
                         nullptr, 32),
            XGEMV_STATUS_NULL_POINTER);
  // An activation that names none, as a C caller can pass it (C++ cannot hold 4 in the enum).
  EXPECT_EQ(moe_up_from_c(dense.experts, &r, 4, ids, 32, const_cast<void *>(ids), 64),
            XGEMV_STATUS_INVALID_VALUE);
  xgemv_moe_routing bad = r;
  bad.id_type = XGEMV_R_32F;
  EXPECT_EQ(up(dense.experts, bad, XGEMV_MOE_SWIGLU, 32, 32), XGEMV_STATUS_INVALID_VALUE);
  bad = r;
  bad.tokens = -1;
  EXPECT_EQ(up(dense.experts, bad, XGEMV_MOE_SWIGLU, 32, 32), XGEMV_STATUS_INVALID_NRHS);
  bad = r;
  bad.top_k = 0;
  EXPECT_EQ(up(dense.experts, bad, XGEMV_MOE_SWIGLU, 32, 32), XGEMV_STATUS_INVALID_NRHS);
  bad.top_k = 33;
  EXPECT_EQ(up(dense.experts, bad, XGEMV_MOE_SWIGLU, 32, 32), XGEMV_STATUS_INVALID_NRHS);
  EXPECT_EQ(up(dense.experts, r, XGEMV_MOE_SWIGLU, 31, 32), XGEMV_STATUS_INVALID_LDX);
  // h of a SwiGLU: 32 outputs; of the identity 64.
  EXPECT_EQ(up(dense.experts, r, XGEMV_MOE_SWIGLU, 32, 31), XGEMV_STATUS_INVALID_LDY);
  EXPECT_EQ(up(dense.experts, r, XGEMV_MOE_IDENTITY, 32, 32), XGEMV_STATUS_INVALID_LDY);
  EXPECT_EQ(up(dense.experts, r, XGEMV_MOE_SWIGLU_CLAMPED, 32, 32), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(up(dense.experts, r, XGEMV_MOE_IDENTITY, 32, 64), XGEMV_STATUS_INVALID_HANDLE);

  const OwnedExperts odd(8, 63, 32);
  EXPECT_EQ(up(odd.experts, r, XGEMV_MOE_SWIGLU_INTERLEAVED, 32, 64), XGEMV_STATUS_INVALID_VALUE);
  EXPECT_EQ(up(odd.experts, r, XGEMV_MOE_IDENTITY, 32, 64), XGEMV_STATUS_INVALID_HANDLE);
  // Quantized halves take whole tiles: 48 rows (24 a half) no, 64 yes; interleaved takes 48.
  const OwnedExperts q48({XGEMV_QFORMAT_INT8, XGEMV_R_16F, XGEMV_R_16F, 48, 32, 0, 0, 0});
  EXPECT_EQ(up(q48.experts, r, XGEMV_MOE_SWIGLU, 32, 64), XGEMV_STATUS_INVALID_VALUE);
  EXPECT_EQ(up(q48.experts, r, XGEMV_MOE_SWIGLU_INTERLEAVED, 32, 64), XGEMV_STATUS_INVALID_HANDLE);

  // Down: 64 outputs of 32 inputs; h rows of 32, y rows of 64.
  std::vector<char> unused;
  const size_t needed = xgemv_moe_down_workspace_bytes(3, 2, 64);
  EXPECT_EQ(needed, size_t(3 * 2 * 64 * 4));
  void *workspace = const_cast<void *>(fake_device_pointer());
  EXPECT_EQ(down(dense.experts, r, 31, 64, nullptr, 0), XGEMV_STATUS_INVALID_LDX);
  EXPECT_EQ(down(dense.experts, r, 32, 63, nullptr, 0), XGEMV_STATUS_INVALID_LDY);
  bad = r;
  bad.weight_type = XGEMV_R_16F;  // the experts are bf16
  EXPECT_EQ(down(dense.experts, bad, 32, 64, nullptr, 0), XGEMV_STATUS_INVALID_VALUE);
  bad.weight_type = XGEMV_R_16BF;
  EXPECT_EQ(down(dense.experts, bad, 32, 64, nullptr, 0), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(down(dense.experts, r, 32, 64, workspace, needed - 1), XGEMV_STATUS_MISALIGNED);
  EXPECT_EQ(down(dense.experts, r, 32, 64, static_cast<char *>(workspace) + 4, needed),
            XGEMV_STATUS_MISALIGNED);
  EXPECT_EQ(down(dense.experts, r, 32, 64, workspace, needed), XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(down(dense.experts, r, 32, 64, nullptr, 0), XGEMV_STATUS_INVALID_HANDLE);
}

}  // namespace
