// Environment controls of the drop-in (read once) and its log.
//   XGEMV_CUBLAS_DISABLE=1  forward every call to the real cuBLAS
//   XGEMV_CUBLAS_LOG=1      one line per intercepted call on stderr, saying who served it:
//                  xgemv_cublas: cublasSgemv_v2 -> xgemv (T m=64 n=32 batch=1 nrhs=1 t_rowblock_32)
//                  xgemv_cublas: cublasSgemv_v2 -> cublas (<why>)
#pragma once

namespace xgemv::cublas_dropin {

bool interception_disabled() noexcept;
bool logging_enabled() noexcept;

// Writes one log line (when logging is enabled): "xgemv_cublas: <entry> -> <server> (<detail>)".
void log_call(const char *entry, const char *server, const char *detail) noexcept;

}  // namespace xgemv::cublas_dropin
