// Weights without a GPU: xgemv_qweight_get_layout against the header's formulas for every format,
// option and type over edge sizes (and a few layouts worked out by hand), its statuses in the
// documented order, and xgemv_qweight_create / _destroy / _get_info: the same checks, then the
// storage pointer (NULL, misaligned), and the info kept as given. Nothing is read from a
// storage, so the storage pointers here are addresses no allocation holds.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <xgemv/xgemv_quant.h>

#include "support/quant_formats.hpp"
#include "support/quant_reference.hpp"

namespace xgemv_test::quant {
namespace {

constexpr size_t kAlignment = 256;

// A 256-byte aligned address that is never dereferenced (create reads nothing).
void *unread_storage(uintptr_t offset = 0) {
  return reinterpret_cast<void *>(uintptr_t{1} << 20 | offset);
}

size_t align_up(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The layout of a valid info: the header's part sizes and counts; every part present at a
// 256-byte aligned offset, inside the storage, overlapping no other; absent parts of 0 bytes;
// and no more storage than the parts rounded up to 256 bytes each.
::testing::AssertionResult layout_follows_the_header(const xgemv_qweight_info &info,
                                                     const xgemv_qweight_layout &layout) {
  const LayoutSizes want = expected_layout_sizes(info);
  const std::pair<const char *, std::pair<size_t, size_t>> counts[] = {
      {"row_tiles", {size_t(layout.row_tiles), size_t(want.row_tiles)}},
      {"k_blocks", {size_t(layout.k_blocks), size_t(want.k_blocks)}},
      {"scale_groups", {size_t(layout.scale_groups), size_t(want.scale_groups)}},
      {"codes_bytes", {layout.codes_bytes, want.codes_bytes}},
      {"scales_bytes", {layout.scales_bytes, want.scales_bytes}},
      {"zeros_bytes", {layout.zeros_bytes, want.zeros_bytes}},
      {"permutation_bytes", {layout.permutation_bytes, want.permutation_bytes}},
  };
  for (const auto &[name, values] : counts)
    if (values.first != values.second)
      return ::testing::AssertionFailure()
             << name << " is " << values.first << ", the header's formula gives " << values.second;
  const std::pair<size_t, size_t> parts[] = {{layout.codes_offset, layout.codes_bytes},
                                             {layout.scales_offset, layout.scales_bytes},
                                             {layout.zeros_offset, layout.zeros_bytes},
                                             {layout.permutation_offset, layout.permutation_bytes}};
  size_t rounded_parts = 0;
  for (size_t i = 0; i < 4; ++i) {
    const auto [offset, bytes] = parts[i];
    if (bytes == 0) continue;
    rounded_parts += align_up(bytes);
    if (offset % kAlignment != 0)
      return ::testing::AssertionFailure() << "part " << i << " at offset " << offset;
    if (offset + bytes > layout.bytes)
      return ::testing::AssertionFailure()
             << "part " << i << " ends at " << offset + bytes << ", beyond " << layout.bytes;
    for (size_t j = 0; j < i; ++j) {
      const auto [other_offset, other_bytes] = parts[j];
      if (other_bytes != 0 && offset < other_offset + other_bytes && other_offset < offset + bytes)
        return ::testing::AssertionFailure() << "parts " << j << " and " << i << " overlap";
    }
  }
  if (layout.bytes > rounded_parts)
    return ::testing::AssertionFailure()
           << layout.bytes << " bytes of storage for " << rounded_parts << " of aligned parts";
  return ::testing::AssertionSuccess();
}

TEST(QweightLayout, EveryFormatAndTypeOverEdgeSizesFollowsTheHeader) {
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes)
      for (const xgemv_datatype scale : kScaleTypes)
        for (const int64_t outputs :
             {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{129}, int64_t{4097}})
          for (const int64_t inputs : edge_inputs(f)) {
            const xgemv_qweight_info info = make_info(f, activation, scale, outputs, inputs);
            SCOPED_TRACE(describe(info));
            xgemv_qweight_layout layout;
            ASSERT_EQ(xgemv_qweight_get_layout(&info, &layout), XGEMV_STATUS_SUCCESS);
            EXPECT_TRUE(layout_follows_the_header(info, layout));
          }
}

// Layouts worked out from the header's text by hand: T = ceil(outputs / 16), KB_count =
// ceil(inputs / KB), G = KB_count * KB / group, codes T * KB_count * 512 bytes, scales
// T * G * 16 scales, zero points T * G * 8 bytes, permutation 4 bytes an input.
TEST(QweightLayout, LayoutsWorkedOutByHand) {
  struct HandLayout {
    const char *what;
    xgemv_qweight_info info;
    int64_t row_tiles, k_blocks, scale_groups;
    size_t codes, scales, zeros, permutation;
  };
  const HandLayout kLayouts[] = {
      {"INT4 g128 with zero points, permuted, 4096 x 4096: G = 4096 / 128",
       {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 4096, 4096, 128, 1, 1},
       256,
       64,
       32,
       8388608,
       262144,
       65536,
       16384},
      {"INT4 g32, 17 x 96: two k-blocks of 64, G = 128 / 32 = 4 (the fourth all padding)",
       {XGEMV_QFORMAT_INT4, XGEMV_R_16BF, XGEMV_R_16BF, 17, 96, 32, 1, 0},
       2,
       2,
       4,
       2048,
       256,
       64,
       0},
      {"INT4 g128, 1 x 128: one tile, two k-blocks, one group",
       {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_32F, 1, 128, 128, 0, 0},
       1,
       2,
       1,
       1024,
       64,
       0,
       0},
      {"INT8, 1 x 1: one tile, one k-block of 32, one group",
       {XGEMV_QFORMAT_INT8, XGEMV_R_16F, XGEMV_R_16F, 1, 1, 0, 0, 0},
       1,
       1,
       1,
       512,
       32,
       0,
       0},
      {"FP8_E4M3, 16 x 14336: 448 k-blocks, one group",
       {XGEMV_QFORMAT_FP8_E4M3, XGEMV_R_16BF, XGEMV_R_32F, 16, 14336, 0, 0, 0},
       1,
       448,
       1,
       229376,
       64,
       0,
       0},
      {"FP8_E4M3_BLOCK, 200 x 33: 13 tiles, 2 k-blocks, one partial 128-input group",
       {XGEMV_QFORMAT_FP8_E4M3_BLOCK, XGEMV_R_16F, XGEMV_R_32F, 200, 33, 0, 0, 0},
       13,
       2,
       1,
       13312,
       832,
       0,
       0},
      {"FP8_E4M3_BLOCK, 17 x 300: 10 k-blocks, G = ceil(320 / 128) = 3",
       {XGEMV_QFORMAT_FP8_E4M3_BLOCK, XGEMV_R_16BF, XGEMV_R_16BF, 17, 300, 0, 0, 0},
       2,
       10,
       3,
       10240,
       192,
       0,
       0},
  };
  for (const HandLayout &h : kLayouts) {
    SCOPED_TRACE(h.what);
    xgemv_qweight_layout layout;
    ASSERT_EQ(xgemv_qweight_get_layout(&h.info, &layout), XGEMV_STATUS_SUCCESS);
    EXPECT_EQ(layout.row_tiles, h.row_tiles);
    EXPECT_EQ(layout.k_blocks, h.k_blocks);
    EXPECT_EQ(layout.scale_groups, h.scale_groups);
    EXPECT_EQ(layout.codes_bytes, h.codes);
    EXPECT_EQ(layout.scales_bytes, h.scales);
    EXPECT_EQ(layout.zeros_bytes, h.zeros);
    EXPECT_EQ(layout.permutation_bytes, h.permutation);
    EXPECT_TRUE(layout_follows_the_header(h.info, layout));
  }
}

// outputs 1 .. 2^40 and inputs 1 .. 2^31 - 1, as the header gives them; past either end the
// shape is refused.
TEST(QweightLayout, ShapesAreLimitedToTheirRanges) {
  struct Shape {
    const char *what;
    xgemv_qformat format;
    int64_t outputs, inputs;
    xgemv_status expected;
  };
  const Shape kShapes[] = {
      {"2^30 x 2^30 INT8: 2^60 bytes of codes", XGEMV_QFORMAT_INT8, int64_t{1} << 30,
       int64_t{1} << 30, XGEMV_STATUS_SUCCESS},
      {"1 x (2^31 - 1) INT8", XGEMV_QFORMAT_INT8, 1, (int64_t{1} << 31) - 1,
       XGEMV_STATUS_SUCCESS},
      {"2^40 x 1 FP8_E4M3", XGEMV_QFORMAT_FP8_E4M3, int64_t{1} << 40, 1, XGEMV_STATUS_SUCCESS},
      {"1 x 2^31 INT8", XGEMV_QFORMAT_INT8, 1, int64_t{1} << 31, XGEMV_STATUS_INVALID_QSHAPE},
      {"(2^40 + 1) x 1 FP8_E4M3", XGEMV_QFORMAT_FP8_E4M3, (int64_t{1} << 40) + 1, 1,
       XGEMV_STATUS_INVALID_QSHAPE},
  };
  for (const Shape &s : kShapes) {
    SCOPED_TRACE(s.what);
    const xgemv_qweight_info info = {s.format, XGEMV_R_16F, XGEMV_R_32F, s.outputs,
                                     s.inputs, 0,           0,           0};
    xgemv_qweight_layout layout;
    const xgemv_status status = xgemv_qweight_get_layout(&info, &layout);
    EXPECT_EQ(status, s.expected);
    if (status == XGEMV_STATUS_SUCCESS) {
      EXPECT_TRUE(layout_follows_the_header(info, layout));
    }
  }
}

// A valid base (INT4 g128 symmetric, 32 x 256, fp16) with one or more fields changed, and the
// status of get_layout and create (first failure wins: format, activation and scale types,
// options; then outputs, inputs and the storage size; then the group size).
struct InfoCase {
  const char *what;
  xgemv_qweight_info info;
  xgemv_status expected;
};

constexpr xgemv_qweight_info kBase = {
    XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 32, 256, 128, 0, 0};

constexpr xgemv_qweight_info with_format(xgemv_qweight_info info, int format, int64_t group_size) {
  info.format = static_cast<xgemv_qformat>(format);
  info.group_size = group_size;
  return info;
}
constexpr xgemv_qweight_info with_types(xgemv_qweight_info info, int activation, int scale) {
  info.activation_type = static_cast<xgemv_datatype>(activation);
  info.scale_type = static_cast<xgemv_datatype>(scale);
  return info;
}
constexpr xgemv_qweight_info with_shape(xgemv_qweight_info info, int64_t outputs, int64_t inputs) {
  info.outputs = outputs;
  info.inputs = inputs;
  return info;
}
constexpr xgemv_qweight_info with_group(xgemv_qweight_info info, int64_t group_size) {
  info.group_size = group_size;
  return info;
}
constexpr xgemv_qweight_info with_options(xgemv_qweight_info info, int zero_points, int permuted) {
  info.zero_points = zero_points;
  info.permuted = permuted;
  return info;
}

// Enumerators' values only, or values within the enums' ranges (0..7 for xgemv_qformat, 0..15
// for xgemv_datatype): no out-of-range enum values in C++.
constexpr InfoCase kInfoCases[] = {
    {"format 0", with_format(kBase, 0, 128), XGEMV_STATUS_INVALID_QFORMAT},
    {"format 5", with_format(kBase, 5, 0), XGEMV_STATUS_INVALID_QFORMAT},
    {"format 7", with_format(kBase, 7, 0), XGEMV_STATUS_INVALID_QFORMAT},
    {"activation fp32", with_types(kBase, XGEMV_R_32F, XGEMV_R_16F), XGEMV_STATUS_INVALID_QFORMAT},
    {"activation fp64", with_types(kBase, XGEMV_R_64F, XGEMV_R_16F), XGEMV_STATUS_INVALID_QFORMAT},
    {"activation 15", with_types(kBase, 15, XGEMV_R_16F), XGEMV_STATUS_INVALID_QFORMAT},
    {"scale type fp64", with_types(kBase, XGEMV_R_16F, XGEMV_R_64F), XGEMV_STATUS_INVALID_QFORMAT},
    {"scale type 3", with_types(kBase, XGEMV_R_16BF, 3), XGEMV_STATUS_INVALID_QFORMAT},
    {"scale type 15", with_types(kBase, XGEMV_R_16F, 15), XGEMV_STATUS_INVALID_QFORMAT},
    {"zero points with INT8", with_options(with_format(kBase, XGEMV_QFORMAT_INT8, 0), 1, 0),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"zero points with FP8_E4M3", with_options(with_format(kBase, XGEMV_QFORMAT_FP8_E4M3, 0), 1, 0),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"zero points with FP8_E4M3_BLOCK",
     with_options(with_format(kBase, XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0), 1, 0),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"permutation with INT8", with_options(with_format(kBase, XGEMV_QFORMAT_INT8, 0), 0, 1),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"permutation with FP8_E4M3", with_options(with_format(kBase, XGEMV_QFORMAT_FP8_E4M3, 0), 0, 1),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"permutation with FP8_E4M3_BLOCK",
     with_options(with_format(kBase, XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0), 0, 1),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"outputs 0", with_shape(kBase, 0, 256), XGEMV_STATUS_INVALID_QSHAPE},
    {"outputs -1", with_shape(kBase, -1, 256), XGEMV_STATUS_INVALID_QSHAPE},
    {"outputs INT64_MIN", with_shape(kBase, INT64_MIN, 256), XGEMV_STATUS_INVALID_QSHAPE},
    {"inputs 0", with_shape(kBase, 32, 0), XGEMV_STATUS_INVALID_QSHAPE},
    {"inputs -128", with_shape(kBase, 32, -128), XGEMV_STATUS_INVALID_QSHAPE},
    {"outputs INT64_MAX", with_shape(kBase, INT64_MAX, 256), XGEMV_STATUS_INVALID_QSHAPE},
    {"inputs INT64_MAX (INT8)", with_shape(with_format(kBase, XGEMV_QFORMAT_INT8, 0), 1, INT64_MAX),
     XGEMV_STATUS_INVALID_QSHAPE},
    {"2^32 x 2^30 INT8: 2^62 bytes of codes and the scales",
     with_shape(with_format(kBase, XGEMV_QFORMAT_INT8, 0), int64_t{1} << 32, int64_t{1} << 30),
     XGEMV_STATUS_INVALID_QSHAPE},
    {"2^62 x 2^62 INT4 (products beyond int64)",
     with_shape(kBase, int64_t{1} << 62, int64_t{1} << 62), XGEMV_STATUS_INVALID_QSHAPE},
    {"INT4 group 0", with_group(kBase, 0), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 16", with_group(kBase, 16), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 96", with_shape(with_group(kBase, 96), 32, 192), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 256", with_group(kBase, 256), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 1", with_group(kBase, 1), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group -32", with_group(kBase, -32), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 64 not dividing 96 inputs", with_shape(with_group(kBase, 64), 32, 96),
     XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 128 beyond 64 inputs", with_shape(kBase, 32, 64), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 128 not dividing 192 inputs", with_shape(kBase, 32, 192),
     XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT4 group 32 not dividing 33 inputs", with_shape(with_group(kBase, 32), 32, 33),
     XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"INT8 group 32", with_format(kBase, XGEMV_QFORMAT_INT8, 32), XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"FP8_E4M3 group 128", with_format(kBase, XGEMV_QFORMAT_FP8_E4M3, 128),
     XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"FP8_E4M3_BLOCK group 128", with_format(kBase, XGEMV_QFORMAT_FP8_E4M3_BLOCK, 128),
     XGEMV_STATUS_INVALID_GROUP_SIZE},
    {"FP8_E4M3_BLOCK group -1", with_format(kBase, XGEMV_QFORMAT_FP8_E4M3_BLOCK, -1),
     XGEMV_STATUS_INVALID_GROUP_SIZE},
    // First failure wins.
    {"format before shape and group", with_shape(with_format(kBase, 0, 16), 0, 0),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"activation before shape", with_shape(with_types(kBase, XGEMV_R_32F, XGEMV_R_16F), -1, 256),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"scale type before group", with_group(with_types(kBase, XGEMV_R_16F, 1), 16),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"options before shape",
     with_shape(with_options(with_format(kBase, XGEMV_QFORMAT_INT8, 0), 1, 0), 0, 256),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"options before group", with_options(with_format(kBase, XGEMV_QFORMAT_FP8_E4M3, 64), 0, 1),
     XGEMV_STATUS_INVALID_QFORMAT},
    {"outputs before group", with_shape(with_group(kBase, 16), 0, 256),
     XGEMV_STATUS_INVALID_QSHAPE},
    {"inputs before group", with_shape(with_group(kBase, 0), 32, -1), XGEMV_STATUS_INVALID_QSHAPE},
    // Valid.
    {"INT4 g32, one group", with_shape(with_group(kBase, 32), 1, 32), XGEMV_STATUS_SUCCESS},
    {"INT4 g64 with zero points, permuted", with_options(with_group(kBase, 64), 1, 1),
     XGEMV_STATUS_SUCCESS},
    {"bf16 activations, fp32 scales", with_types(kBase, XGEMV_R_16BF, XGEMV_R_32F),
     XGEMV_STATUS_SUCCESS},
    {"INT8, 1 x 1", with_shape(with_format(kBase, XGEMV_QFORMAT_INT8, 0), 1, 1),
     XGEMV_STATUS_SUCCESS},
    {"FP8_E4M3_BLOCK, 129 x 129",
     with_shape(with_format(kBase, XGEMV_QFORMAT_FP8_E4M3_BLOCK, 0), 129, 129),
     XGEMV_STATUS_SUCCESS},
};

TEST(QweightLayout, StatusesInTheDocumentedOrder) {
  for (const InfoCase &c : kInfoCases) {
    SCOPED_TRACE(c.what);
    xgemv_qweight_layout layout;
    EXPECT_EQ(xgemv_qweight_get_layout(&c.info, &layout), c.expected);
  }
  xgemv_qweight_layout layout;
  EXPECT_EQ(xgemv_qweight_get_layout(nullptr, &layout), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_qweight_get_layout(&kBase, nullptr), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_qweight_get_layout(nullptr, nullptr), XGEMV_STATUS_NULL_POINTER);
}

TEST(QweightCreate, ChecksTheInfoFirstThenTheStorage) {
  const std::pair<const char *, void *> kStorages[] = {
      {"aligned storage", unread_storage()},
      {"NULL storage", nullptr},
      {"storage one byte past 256-byte alignment", unread_storage(1)},
  };
  for (const InfoCase &c : kInfoCases) {
    if (c.expected == XGEMV_STATUS_SUCCESS) continue;
    for (const auto &[storage_name, storage] : kStorages) {
      SCOPED_TRACE(std::string(c.what) + ", " + storage_name);
      xgemv_qweight weight = nullptr;
      EXPECT_EQ(xgemv_qweight_create(&weight, &c.info, storage), c.expected);
      xgemv_qweight_destroy(weight);
    }
  }
  xgemv_qweight weight = nullptr;
  EXPECT_EQ(xgemv_qweight_create(nullptr, &kBase, unread_storage()), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_qweight_create(&weight, nullptr, unread_storage()), XGEMV_STATUS_NULL_POINTER);
  EXPECT_EQ(xgemv_qweight_create(&weight, &kBase, nullptr), XGEMV_STATUS_NULL_POINTER);
  for (const uintptr_t offset :
       {uintptr_t{1}, uintptr_t{2}, uintptr_t{16}, uintptr_t{128}, uintptr_t{255}}) {
    SCOPED_TRACE("storage " + std::to_string(offset) + " bytes past 256-byte alignment");
    EXPECT_EQ(xgemv_qweight_create(&weight, &kBase, unread_storage(offset)),
              XGEMV_STATUS_MISALIGNED);
  }
}

bool same_info(const xgemv_qweight_info &a, const xgemv_qweight_info &b) {
  return a.format == b.format && a.activation_type == b.activation_type &&
         a.scale_type == b.scale_type && a.outputs == b.outputs && a.inputs == b.inputs &&
         a.group_size == b.group_size && a.zero_points == b.zero_points && a.permuted == b.permuted;
}

TEST(QweightCreate, EveryValidInfoMakesAWeightThatKeepsIt) {
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype activation : kActivationTypes)
      for (const xgemv_datatype scale : kScaleTypes)
        for (const int64_t inputs : edge_inputs(f)) {
          const xgemv_qweight_info info = make_info(f, activation, scale, 17, inputs);
          SCOPED_TRACE(describe(info));
          const OwnedQweight weight(info, unread_storage(kAlignment));
          ASSERT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
          ASSERT_NE(weight.get(), nullptr);
          xgemv_qweight_info kept{};
          ASSERT_EQ(xgemv_qweight_get_info(weight.get(), &kept), XGEMV_STATUS_SUCCESS);
          EXPECT_TRUE(same_info(kept, info));
        }
  for (const InfoCase &c : kInfoCases) {
    if (c.expected != XGEMV_STATUS_SUCCESS) continue;
    SCOPED_TRACE(c.what);
    const OwnedQweight weight(c.info, unread_storage());
    EXPECT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
  }
}

TEST(QweightCreate, DestroyAndGetInfoGivenNull) {
  EXPECT_EQ(xgemv_qweight_destroy(nullptr), XGEMV_STATUS_SUCCESS);
  xgemv_qweight_info info{};
  EXPECT_EQ(xgemv_qweight_get_info(nullptr, &info), XGEMV_STATUS_NULL_POINTER);
  const OwnedQweight weight(kBase, unread_storage());
  ASSERT_EQ(weight.status(), XGEMV_STATUS_SUCCESS);
  EXPECT_EQ(xgemv_qweight_get_info(weight.get(), nullptr), XGEMV_STATUS_NULL_POINTER);
}

}  // namespace
}  // namespace xgemv_test::quant
