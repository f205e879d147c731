/* xgemv_moe_up as a C program calls it: C lets any int stand where the header names an enum
 * (C++ does not), so the value that names no activation is passed from here. */
#include <xgemv/xgemv_moe.h>

xgemv_status moe_up_from_c(xgemv_experts experts, const xgemv_moe_routing *routing,
                           int activation, const void *x, int64_t ldx, void *h, int64_t ldh) {
  return xgemv_moe_up(NULL, experts, routing, (xgemv_moe_activation)activation, 1.702f, 7.0f,
                      NULL, x, ldx, h, ldh);
}
