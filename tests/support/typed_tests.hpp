// GoogleTest typed tests over xgemv's four element types.
#pragma once

#include <gtest/gtest.h>

#include "element_types.hpp"

namespace xgemv_test {

using ElementTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;

}  // namespace xgemv_test

// Declares Suite, a typed test suite over the four element types whose fixture is Base (a
// ::testing::Test, which may name the element type T), in one line instead of GoogleTest's three.
#define XGEMV_TYPED_TEST_SUITE(Suite, Base) \
  template <class T>                        \
  class Suite : public Base {};             \
  TYPED_TEST_SUITE(Suite, ::xgemv_test::ElementTypes)
