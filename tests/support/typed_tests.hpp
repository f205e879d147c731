// GoogleTest typed tests over xgemv's four element types.
#pragma once

#include <gtest/gtest.h>

#include "element_types.hpp"

namespace xgemv_test {

using ElementTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;

}  // namespace xgemv_test
