// The kernel-variant table as the C ABI shows it, without a GPU: names, lookups, and the
// refusals that need no handle.
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <xgemv/xgemv.h>

namespace {

TEST(KernelVariantTable, ListsUniqueNamedVariants) {
  const int count = xgemv_kernel_variant_count();
  ASSERT_GE(count, 2);
  std::set<std::string> names;
  for (int v = 0; v < count; ++v) {
    const char *name = xgemv_kernel_variant_name(v);
    ASSERT_NE(name, nullptr) << v;
    EXPECT_GT(std::string(name).size(), 0u);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), size_t(count)) << "variant names must be unique";
  EXPECT_EQ(xgemv_kernel_variant_name(-1), nullptr);
  EXPECT_EQ(xgemv_kernel_variant_name(count), nullptr);
}

TEST(KernelVariantTable, HandleFunctionsRefuseANullHandle) {
  EXPECT_EQ(xgemv_set_kernel_variant(nullptr, xgemv_kernel_variant_name(0)),
            XGEMV_STATUS_INVALID_HANDLE);
  EXPECT_EQ(xgemv_get_last_kernel_variant(nullptr), nullptr);
}

TEST(KernelVariantTable, NewStatusesHaveTheirOwnStrings) {
  const std::string not_supported = xgemv_status_string(XGEMV_STATUS_NOT_SUPPORTED);
  const std::string invalid_value = xgemv_status_string(XGEMV_STATUS_INVALID_VALUE);
  EXPECT_NE(not_supported.find("not supported"), std::string::npos);
  EXPECT_NE(invalid_value.find("variant"), std::string::npos);
  EXPECT_EQ(xgemv_status_argument(XGEMV_STATUS_NOT_SUPPORTED), 0);
}

}  // namespace
