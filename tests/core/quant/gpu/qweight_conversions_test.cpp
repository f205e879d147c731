// The conversions into a weight's storage, on the device, against the host reference
// (support/quant_reference): xgemv_qweight_pack from plain codes (every format, option and scale
// type; padded leading dimensions; high nibbles that must be masked) gives the host packer's
// storage byte for byte, padding included; pack_gptq (with and without act-order g_idx, zero
// points stored minus one) and pack_awq from checkpoint tensors the host packer's storage of the
// same plain weight; dequantize (fp32, fp16, bf16) the host dequantizer's values; quantize the
// host quantizer's weight (an all-zero group included); a pack captured in a CUDA graph; and the
// argument statuses, each refused call touching nothing. The storage is filled with 0xFF before
// every conversion, so every byte a conversion must write is seen written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xgemv/xgemv_quant.h>

#include "support/device_buffer.hpp"
#include "support/graph_capture.hpp"
#include "support/quant_formats.hpp"
#include "support/quant_reference.hpp"
#include "support/random_data.hpp"

namespace xgemv_test::quant {
namespace {

template <class T>
std::unique_ptr<GuardedDeviceBuffer<T>> device_copy(const std::vector<T> &contents) {
  auto buffer = std::make_unique<GuardedDeviceBuffer<T>>(contents.size());
  buffer->upload(contents);
  return buffer;
}

// A weight's storage on the device, filled with kGuardByte, and the weight made on it.
class DeviceWeight {
 public:
  explicit DeviceWeight(const xgemv_qweight_info &info) : info_(info) {
    if (xgemv_qweight_get_layout(&info_, &layout_) != XGEMV_STATUS_SUCCESS)
      throw std::invalid_argument("DeviceWeight: " + describe(info_));
    storage_ = std::make_unique<GuardedDeviceBuffer<uint8_t>>(layout_.bytes);
    weight_ = std::make_unique<OwnedQweight>(info_, storage_->data());
    if (weight_->status() != XGEMV_STATUS_SUCCESS)
      throw std::runtime_error("DeviceWeight: xgemv_qweight_create failed");
  }
  xgemv_qweight get() const { return weight_->get(); }
  const xgemv_qweight_info &info() const { return info_; }
  const xgemv_qweight_layout &layout() const { return layout_; }
  std::vector<uint8_t> storage() const { return storage_->download(); }
  void upload(const std::vector<uint8_t> &storage) { storage_->upload(storage); }
  ::testing::AssertionResult guards_intact() const { return storage_->guards_intact("storage"); }

 private:
  xgemv_qweight_info info_;
  xgemv_qweight_layout layout_{};
  std::unique_ptr<GuardedDeviceBuffer<uint8_t>> storage_;
  std::unique_ptr<OwnedQweight> weight_;
};

// Whether two storages hold the same bytes in each of the four parts (the header does not say
// what the bytes between the parts hold), and the padding is the header's.
::testing::AssertionResult same_storage(const std::vector<uint8_t> &got,
                                        const std::vector<uint8_t> &want,
                                        const xgemv_qweight_info &info,
                                        const xgemv_qweight_layout &layout) {
  const struct {
    const char *name;
    size_t offset, bytes;
  } parts[] = {{"codes", layout.codes_offset, layout.codes_bytes},
               {"scales", layout.scales_offset, layout.scales_bytes},
               {"zero points", layout.zeros_offset, layout.zeros_bytes},
               {"permutation", layout.permutation_offset, layout.permutation_bytes}};
  for (const auto &part : parts)
    for (size_t i = part.offset; i < part.offset + part.bytes; ++i)
      if (got[i] != want[i])
        return ::testing::AssertionFailure()
               << part.name << " byte " << i - part.offset << " is " << int(got[i])
               << ", the host packer's " << int(want[i]);
  if (const std::string errors = padding_errors(got, info, layout); !errors.empty())
    return ::testing::AssertionFailure() << "padding:" << errors;
  return ::testing::AssertionSuccess();
}

void synchronize(const char *what) { check_cuda(cudaDeviceSynchronize(), what); }

class QweightConversions : public GpuHandlesTest {
 protected:
  static xgemv_handle handle() { return gpu().xgemv(); }
  static uint64_t seed(size_t index) {
    return case_seed(::testing::UnitTest::GetInstance()->current_test_info()->name(), index);
  }
};

// --- xgemv_qweight_pack ----------------------------------------------------------------------

// The arguments of xgemv_qweight_pack for a plain weight, on the device, with padded leading
// dimensions whose gaps hold garbage, and garbage in the high nibbles of 4-bit codes and zero
// points (values are taken from the low nibble).
struct PackArguments {
  int64_t ldc, lds, ldz;
  std::unique_ptr<GuardedDeviceBuffer<uint8_t>> codes, scales, zeros;
  std::unique_ptr<GuardedDeviceBuffer<int32_t>> permutation;

  PackArguments(const PlainWeight &w, RandomSource &random) {
    const xgemv_qweight_info &info = w.info;
    const bool four_bit = info.format == XGEMV_QFORMAT_INT4;
    const auto garbage = [&] { return uint8_t(random.integer(0, 255)); };
    ldc = info.inputs + 3;
    std::vector<uint8_t> codes_bytes(size_t(info.outputs * ldc));
    for (int64_t o = 0; o < info.outputs; ++o)
      for (int64_t k = 0; k < ldc; ++k) {
        const uint8_t q = k < info.inputs ? w.codes[size_t(o * info.inputs + k)] : garbage();
        codes_bytes[size_t(o * ldc + k)] = four_bit ? uint8_t((garbage() & 0xF0) | q) : q;
      }
    codes = device_copy(codes_bytes);
    const int64_t columns = scale_columns(info);
    lds = columns + 1;
    std::vector<float> padded_scales(size_t(scale_rows(info) * lds), 12345.0f);
    for (int64_t r = 0; r < scale_rows(info); ++r)
      for (int64_t j = 0; j < columns; ++j)
        padded_scales[size_t(r * lds + j)] = w.scales[size_t(r * columns + j)];
    scales = device_copy(to_bytes(info.scale_type, padded_scales));
    const int64_t zero_columns = zero_point_columns(info);
    ldz = zero_columns + 2;
    if (info.zero_points) {
      std::vector<uint8_t> zero_bytes(size_t(info.outputs * ldz));
      for (int64_t o = 0; o < info.outputs; ++o)
        for (int64_t j = 0; j < ldz; ++j)
          zero_bytes[size_t(o * ldz + j)] =
              j < zero_columns ? uint8_t((garbage() & 0xF0) | w.zeros[size_t(o * zero_columns + j)])
                               : garbage();
      zeros = device_copy(zero_bytes);
    }
    if (info.permuted) permutation = device_copy(w.permutation);
  }

  const uint8_t *zeros_data() const { return zeros ? zeros->data() : nullptr; }
  const int32_t *permutation_data() const { return permutation ? permutation->data() : nullptr; }

  xgemv_status pack(xgemv_handle h, xgemv_qweight weight) const {
    return xgemv_qweight_pack(h, weight, codes->data(), ldc, scales->data(), lds, zeros_data(), ldz,
                              permutation_data());
  }
};

// Every format, option and scale type; outputs of 1, 17 and 130 (a partial tile, a partial block
// of 128); inputs of one group, three (INT4 g32: 96, past a k-block of 64), two, or 1, 31, 33.
std::vector<xgemv_qweight_info> pack_infos() {
  std::vector<xgemv_qweight_info> infos;
  for (const FormatOptions &f : kEveryFormat)
    for (const xgemv_datatype scale : kScaleTypes)
      for (const int64_t outputs : {int64_t{1}, int64_t{17}, int64_t{130}})
        for (const int64_t inputs : {edge_inputs(f)[0], edge_inputs(f)[1], edge_inputs(f)[2]})
          infos.push_back(make_info(f, kActivationTypes[infos.size() % 2], scale, outputs, inputs));
  return infos;
}

TEST_F(QweightConversions, PackGivesTheHostPackersStorage) {
  const std::vector<xgemv_qweight_info> infos = pack_infos();
  for (size_t index = 0; index < infos.size(); ++index) {
    SCOPED_TRACE(describe(infos[index]));
    RandomSource random(seed(index));
    const PlainWeight w = random_plain_weight(infos[index], random);
    DeviceWeight device(infos[index]);
    const PackArguments arguments(w, random);
    ASSERT_EQ(arguments.pack(handle(), device.get()), XGEMV_STATUS_SUCCESS);
    synchronize("xgemv_qweight_pack");
    EXPECT_TRUE(device.guards_intact());
    EXPECT_TRUE(same_storage(device.storage(), pack_storage(w, device.layout()), device.info(),
                             device.layout()));
  }
}

// A pack captured on a user stream and replayed gives the direct pack's storage.
TEST_F(QweightConversions, PackCapturedInAGraph) {
  const xgemv_qweight_info info = {
      XGEMV_QFORMAT_INT4, XGEMV_R_16BF, XGEMV_R_16BF, 1031, 4096, 128, 1, 1};
  RandomSource random(seed(0));
  const PlainWeight w = random_plain_weight(info, random);
  DeviceWeight device(info);
  const PackArguments arguments(w, random);
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ASSERT_EQ(xgemv_set_stream(handle(), stream), XGEMV_STATUS_SUCCESS);
  GraphCapture capture(stream, cudaStreamCaptureModeThreadLocal);
  const xgemv_status status = arguments.pack(handle(), device.get());
  const cudaError_t captured = capture.end();
  EXPECT_EQ(status, XGEMV_STATUS_SUCCESS);
  ASSERT_EQ(captured, cudaSuccess) << cudaGetErrorString(captured);
  capture.replay();
  EXPECT_TRUE(
      same_storage(device.storage(), pack_storage(w, device.layout()), info, device.layout()));
  EXPECT_EQ(xgemv_set_stream(handle(), nullptr), XGEMV_STATUS_SUCCESS);
  cudaStreamDestroy(stream);
}

// --- checkpoints -----------------------------------------------------------------------------

// A GPTQ checkpoint on the device.
struct DeviceGptq {
  std::unique_ptr<GuardedDeviceBuffer<int32_t>> qweight, qzeros, g_idx;
  std::unique_ptr<GuardedDeviceBuffer<uint8_t>> scales;

  DeviceGptq(const GptqCheckpoint &ckpt, xgemv_datatype scale_type)
      : qweight(device_copy(ckpt.qweight)), scales(device_copy(to_bytes(scale_type, ckpt.scales))) {
    if (!ckpt.qzeros.empty()) qzeros = device_copy(ckpt.qzeros);
    if (!ckpt.g_idx.empty()) g_idx = device_copy(ckpt.g_idx);
  }
  const int32_t *qzeros_data() const { return qzeros ? qzeros->data() : nullptr; }
  const int32_t *g_idx_data() const { return g_idx ? g_idx->data() : nullptr; }
};

// Every INT4 option (permuted: act-order with g_idx), outputs multiples of 8 and four groups.
std::vector<xgemv_qweight_info> checkpoint_infos() {
  std::vector<xgemv_qweight_info> infos;
  for (const FormatOptions &f : kEveryFormat) {
    if (f.format != XGEMV_QFORMAT_INT4) continue;
    for (const int64_t outputs : {int64_t{8}, int64_t{24}, int64_t{136}})
      infos.push_back(make_info(f, kActivationTypes[infos.size() % 2],
                                kScaleTypes[infos.size() % 3], outputs, 4 * f.group_size));
  }
  return infos;
}

TEST_F(QweightConversions, PackGptqGivesTheStorageOfTheSamePlainWeight) {
  const std::vector<xgemv_qweight_info> infos = checkpoint_infos();
  for (size_t index = 0; index < infos.size(); ++index) {
    const xgemv_qweight_info &info = infos[index];
    for (const bool minus_one : {false, true}) {
      if (minus_one && !info.zero_points) continue;
      SCOPED_TRACE(describe(info) + (minus_one ? ", zero points stored minus one" : ""));
      RandomSource random(seed(2 * index + minus_one));
      PlainWeight w = random_plain_weight(info, random);
      if (info.permuted)
        w.permutation = act_order_permutation(info.inputs, info.group_size, random);
      const DeviceGptq ckpt(to_gptq(w, minus_one), info.scale_type);
      DeviceWeight device(info);
      ASSERT_EQ(
          xgemv_qweight_pack_gptq(handle(), device.get(), ckpt.qweight->data(), ckpt.qzeros_data(),
                                  ckpt.scales->data(), ckpt.g_idx_data(), minus_one),
          XGEMV_STATUS_SUCCESS);
      synchronize("xgemv_qweight_pack_gptq");
      EXPECT_TRUE(device.guards_intact());
      EXPECT_TRUE(
          same_storage(device.storage(), pack_storage(w, device.layout()), info, device.layout()));
    }
  }
}

TEST_F(QweightConversions, PackAwqGivesTheStorageOfTheSamePlainWeight) {
  const std::vector<xgemv_qweight_info> infos = checkpoint_infos();
  for (size_t index = 0; index < infos.size(); ++index) {
    const xgemv_qweight_info &info = infos[index];
    if (!info.zero_points || info.permuted) continue;
    SCOPED_TRACE(describe(info));
    RandomSource random(seed(index));
    const PlainWeight w = random_plain_weight(info, random);
    const AwqCheckpoint awq = to_awq(w);
    const auto qweight = device_copy(awq.qweight), qzeros = device_copy(awq.qzeros);
    const auto scales = device_copy(to_bytes(info.scale_type, awq.scales));
    DeviceWeight device(info);
    ASSERT_EQ(xgemv_qweight_pack_awq(handle(), device.get(), qweight->data(), qzeros->data(),
                                     scales->data()),
              XGEMV_STATUS_SUCCESS);
    synchronize("xgemv_qweight_pack_awq");
    EXPECT_TRUE(device.guards_intact());
    EXPECT_TRUE(
        same_storage(device.storage(), pack_storage(w, device.layout()), info, device.layout()));
  }
}

// --- xgemv_qweight_dequantize ----------------------------------------------------------------

// Element by element bit for bit, but for the sign of zero: w = v * s is a real number, and the
// header does not say which zero v = 0 gives.
::testing::AssertionResult same_values(const std::vector<uint8_t> &got,
                                       const std::vector<uint8_t> &want, xgemv_datatype type) {
  const size_t size = datatype_bytes(type);
  for (size_t i = 0; i < want.size(); i += size) {
    if (std::memcmp(&got[i], &want[i], size) == 0) continue;
    const float a = load(type, &got[i]), b = load(type, &want[i]);
    if (a == 0 && b == 0) continue;
    return ::testing::AssertionFailure()
           << "element " << i / size << " is " << a << ", the host dequantizer's " << b;
  }
  return ::testing::AssertionSuccess();
}

TEST_F(QweightConversions, DequantizeGivesTheHostDequantizersValues) {
  const std::vector<xgemv_qweight_info> infos = pack_infos();
  for (size_t index = 0; index < infos.size(); index += 3) {
    const xgemv_qweight_info &info = infos[index];
    RandomSource random(seed(index));
    const PlainWeight w = random_plain_weight(info, random);
    DeviceWeight device(info);
    const std::vector<uint8_t> storage = pack_storage(w, device.layout());
    device.upload(storage);
    const std::vector<double> values = dequantize_storage(storage, info, device.layout());
    for (const xgemv_datatype out_type : {XGEMV_R_32F, XGEMV_R_16F, XGEMV_R_16BF}) {
      SCOPED_TRACE(describe(info) + ", out " + datatype_name(out_type));
      const int64_t ldw = info.inputs + 5;
      const std::vector<uint8_t> want =
          dequantized_bytes(values, info.outputs, info.inputs, ldw, out_type, kGuardByte);
      GuardedDeviceBuffer<uint8_t> out(want.size());
      ASSERT_EQ(xgemv_qweight_dequantize(handle(), device.get(), out.data(), ldw, out_type),
                XGEMV_STATUS_SUCCESS);
      synchronize("xgemv_qweight_dequantize");
      EXPECT_TRUE(out.guards_intact("out"));
      EXPECT_TRUE(same_values(out.download(), want, out_type)) << "(past inputs: untouched)";
      EXPECT_TRUE(device.storage() == storage) << "the storage changed";
    }
  }
}

// --- xgemv_qweight_quantize ------------------------------------------------------------------

// Dense weights of the activation type, rows of magnitudes from 2^-6 to 2^6; the first group
// of the first row (the first block for FP8_E4M3_BLOCK, the first row for the per-output
// formats) all zero.
std::vector<float> weights_to_quantize(const xgemv_qweight_info &info, RandomSource &random) {
  std::vector<float> weights(size_t(info.outputs * info.inputs));
  for (int64_t o = 0; o < info.outputs; ++o) {
    const double magnitude = std::ldexp(1.0, int(random.integer(-6, 6)));
    for (int64_t k = 0; k < info.inputs; ++k)
      weights[size_t(o * info.inputs + k)] =
          round_to(info.activation_type, float(random.uniform(-magnitude, magnitude)));
  }
  const int64_t zero_outputs = std::min(outputs_per_scale(info), info.outputs);
  const int64_t zero_inputs = std::min(inputs_per_scale(info), info.inputs);
  for (int64_t o = 0; o < zero_outputs; ++o)
    for (int64_t k = 0; k < zero_inputs; ++k) weights[size_t(o * info.inputs + k)] = 0.0f;
  return weights;
}

TEST_F(QweightConversions, QuantizeFollowsTheHostQuantizer) {
  size_t index = 0;
  for (const FormatOptions &f : kEveryFormat) {
    if (f.permuted) continue;
    for (const xgemv_datatype activation : kActivationTypes)
      for (const xgemv_datatype scale : kScaleTypes)
        for (const int64_t outputs : {int64_t{1}, int64_t{17}, int64_t{130}}) {
          const int64_t inputs = edge_inputs(f)[index % 3];
          const xgemv_qweight_info info = make_info(f, activation, scale, outputs, inputs);
          SCOPED_TRACE(describe(info));
          RandomSource random(seed(index++));
          const std::vector<float> weights = weights_to_quantize(info, random);
          const int64_t ldw = inputs + 2;
          std::vector<float> padded(size_t(outputs * ldw), 777.0f);
          for (int64_t o = 0; o < outputs; ++o)
            std::copy_n(weights.begin() + o * inputs, inputs, padded.begin() + o * ldw);
          const auto dense = device_copy(to_bytes(activation, padded));
          DeviceWeight device(info);
          ASSERT_EQ(xgemv_qweight_quantize(handle(), device.get(), dense->data(), ldw),
                    XGEMV_STATUS_SUCCESS);
          synchronize("xgemv_qweight_quantize");
          EXPECT_TRUE(device.guards_intact());
          const std::vector<uint8_t> got = device.storage();
          const PlainWeight want = quantize(weights, info);
          EXPECT_EQ(quantized_differences(unpack_storage(got, info, device.layout()), want), "");
          // The scales part as a whole (every output of a block keeps its block's scale), and
          // the padding.
          const std::vector<uint8_t> want_storage = pack_storage(want, device.layout());
          const xgemv_qweight_layout &layout = device.layout();
          EXPECT_TRUE(std::equal(got.begin() + layout.scales_offset,
                                 got.begin() + layout.scales_offset + layout.scales_bytes,
                                 want_storage.begin() + layout.scales_offset))
              << "the scales part";
          EXPECT_EQ(padding_errors(got, info, layout), "");
        }
  }
}

// --- argument statuses -----------------------------------------------------------------------

// One conversion call that must be refused with `expected` (or, where the header names no
// status, with any status but SUCCESS) and leave the storage as it was.
struct RefusedCall {
  std::string what;
  DeviceWeight *weight;
  std::function<xgemv_status()> call;
  xgemv_status expected;  // XGEMV_STATUS_SUCCESS: any refusal
};

void expect_refused(const RefusedCall &c) {
  SCOPED_TRACE(c.what);
  const std::vector<uint8_t> before = c.weight->storage();
  const xgemv_status status = c.call();
  if (c.expected == XGEMV_STATUS_SUCCESS)
    EXPECT_NE(status, XGEMV_STATUS_SUCCESS) << "a call the header does not allow";
  else
    EXPECT_EQ(status, c.expected) << xgemv_status_string(status);
  synchronize("refused conversion");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_TRUE(c.weight->storage() == before) << "the storage changed";
}

TEST_F(QweightConversions, PackArgumentStatuses) {
  const xgemv_handle h = handle();
  RandomSource random(seed(0));
  const xgemv_qweight_info full = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 32, 1, 1};
  const xgemv_qweight_info plain = {
      XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 32, 0, 0};
  const xgemv_qweight_info int8 = {XGEMV_QFORMAT_INT8, XGEMV_R_16BF, XGEMV_R_32F, 24, 128, 0, 0, 0};
  const xgemv_qweight_info block = {
      XGEMV_QFORMAT_FP8_E4M3_BLOCK, XGEMV_R_16F, XGEMV_R_16BF, 130, 300, 0, 0, 0};
  DeviceWeight w_full(full), w_plain(plain), w_int8(int8), w_block(block);
  const PackArguments a(random_plain_weight(full, random), random);
  const PackArguments b(random_plain_weight(block, random), random);
  const PackArguments c8(random_plain_weight(int8, random), random);
  const auto codes = a.codes->data();
  const auto scales = a.scales->data();
  const auto zeros = a.zeros_data();
  const auto perm = a.permutation_data();
  const RefusedCall calls[] = {
      {"NULL handle", &w_full,
       [&] {
         return xgemv_qweight_pack(nullptr, w_full.get(), codes, a.ldc, scales, a.lds, zeros, a.ldz,
                                   perm);
       },
       XGEMV_STATUS_INVALID_HANDLE},
      {"NULL weight", &w_full,
       [&] {
         return xgemv_qweight_pack(h, nullptr, codes, a.ldc, scales, a.lds, zeros, a.ldz, perm);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"NULL codes", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), nullptr, a.ldc, scales, a.lds, zeros, a.ldz,
                                   perm);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"NULL scales", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), codes, a.ldc, nullptr, a.lds, zeros, a.ldz,
                                   perm);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"NULL zeros with zero points", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), codes, a.ldc, scales, a.lds, nullptr, a.ldz,
                                   perm);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"NULL permutation for a permuted weight", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), codes, a.ldc, scales, a.lds, zeros, a.ldz,
                                   nullptr);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"ldc < inputs", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), codes, full.inputs - 1, scales, a.lds, zeros,
                                   a.ldz, perm);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"lds < inputs / group_size", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), codes, a.ldc, scales, 3, zeros, a.ldz, perm);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"ldz < inputs / group_size", &w_full,
       [&] {
         return xgemv_qweight_pack(h, w_full.get(), codes, a.ldc, scales, a.lds, zeros, 3, perm);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"zeros for a symmetric weight", &w_plain,
       [&] {
         return xgemv_qweight_pack(h, w_plain.get(), codes, a.ldc, scales, a.lds, zeros, a.ldz,
                                   nullptr);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"a permutation for an unpermuted weight", &w_plain,
       [&] {
         return xgemv_qweight_pack(h, w_plain.get(), codes, a.ldc, scales, a.lds, nullptr, a.ldz,
                                   perm);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"INT8: lds < 1", &w_int8,
       [&] {
         return xgemv_qweight_pack(h, w_int8.get(), c8.codes->data(), c8.ldc, c8.scales->data(), 0,
                                   nullptr, 0, nullptr);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"INT8: zeros given", &w_int8,
       [&] {
         return xgemv_qweight_pack(h, w_int8.get(), c8.codes->data(), c8.ldc, c8.scales->data(),
                                   c8.lds, zeros, a.ldz, nullptr);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"FP8_E4M3_BLOCK: lds < ceil(inputs / 128)", &w_block,
       [&] {
         return xgemv_qweight_pack(h, w_block.get(), b.codes->data(), b.ldc, b.scales->data(), 2,
                                   nullptr, 0, nullptr);
       },
       XGEMV_STATUS_INVALID_VALUE},
  };
  for (const RefusedCall &c : calls) expect_refused(c);
}

TEST_F(QweightConversions, CheckpointArgumentStatuses) {
  const xgemv_handle h = handle();
  RandomSource random(seed(0));
  const xgemv_qweight_info zero_points = {
      XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 32, 1, 0};
  const xgemv_qweight_info symmetric = {
      XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 32, 0, 0};
  const xgemv_qweight_info act_order = {
      XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 32, 1, 1};
  xgemv_qweight_info twelve_outputs = zero_points;
  twelve_outputs.outputs = 12;
  const xgemv_qweight_info int8 = {XGEMV_QFORMAT_INT8, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 0, 0, 0};
  DeviceWeight w_zero_points(zero_points), w_symmetric(symmetric), w_act_order(act_order),
      w_twelve(twelve_outputs), w_int8(int8);
  PlainWeight plain = random_plain_weight(act_order, random);
  plain.permutation = act_order_permutation(128, 32, random);
  const DeviceGptq g(to_gptq(plain, false), XGEMV_R_16F);
  const int32_t *qweight = g.qweight->data(), *qzeros = g.qzeros_data(), *g_idx = g.g_idx_data();
  const void *scales = g.scales->data();
  const RefusedCall calls[] = {
      {"GPTQ: NULL handle", &w_zero_points,
       [&] {
         return xgemv_qweight_pack_gptq(nullptr, w_zero_points.get(), qweight, qzeros, scales,
                                        nullptr, 0);
       },
       XGEMV_STATUS_INVALID_HANDLE},
      {"GPTQ: NULL weight", &w_zero_points,
       [&] { return xgemv_qweight_pack_gptq(h, nullptr, qweight, qzeros, scales, nullptr, 0); },
       XGEMV_STATUS_NULL_POINTER},
      {"GPTQ: NULL qweight", &w_zero_points,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_zero_points.get(), nullptr, qzeros, scales, nullptr,
                                        0);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"GPTQ: NULL scales", &w_zero_points,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_zero_points.get(), qweight, qzeros, nullptr, nullptr,
                                        0);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"GPTQ: NULL qzeros with zero points", &w_zero_points,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_zero_points.get(), qweight, nullptr, scales, nullptr,
                                        0);
       },
       XGEMV_STATUS_NULL_POINTER},
      {"GPTQ: qzeros for a symmetric weight", &w_symmetric,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_symmetric.get(), qweight, qzeros, scales, nullptr, 0);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"GPTQ: g_idx for an unpermuted weight", &w_zero_points,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_zero_points.get(), qweight, qzeros, scales, g_idx, 0);
       },
       XGEMV_STATUS_INVALID_VALUE},
      {"GPTQ: outputs not a multiple of 8", &w_twelve,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_twelve.get(), qweight, qzeros, scales, nullptr, 0);
       },
       XGEMV_STATUS_INVALID_QSHAPE},
      {"GPTQ: an INT8 weight", &w_int8,
       [&] {
         return xgemv_qweight_pack_gptq(h, w_int8.get(), qweight, nullptr, scales, nullptr, 0);
       },
       XGEMV_STATUS_SUCCESS},
      {"AWQ: NULL handle", &w_zero_points,
       [&] {
         return xgemv_qweight_pack_awq(nullptr, w_zero_points.get(), qweight, qzeros, scales);
       },
       XGEMV_STATUS_INVALID_HANDLE},
      {"AWQ: NULL weight", &w_zero_points,
       [&] { return xgemv_qweight_pack_awq(h, nullptr, qweight, qzeros, scales); },
       XGEMV_STATUS_NULL_POINTER},
      {"AWQ: NULL qweight", &w_zero_points,
       [&] { return xgemv_qweight_pack_awq(h, w_zero_points.get(), nullptr, qzeros, scales); },
       XGEMV_STATUS_NULL_POINTER},
      {"AWQ: NULL qzeros", &w_zero_points,
       [&] { return xgemv_qweight_pack_awq(h, w_zero_points.get(), qweight, nullptr, scales); },
       XGEMV_STATUS_NULL_POINTER},
      {"AWQ: NULL scales", &w_zero_points,
       [&] { return xgemv_qweight_pack_awq(h, w_zero_points.get(), qweight, qzeros, nullptr); },
       XGEMV_STATUS_NULL_POINTER},
      {"AWQ: outputs not a multiple of 8", &w_twelve,
       [&] { return xgemv_qweight_pack_awq(h, w_twelve.get(), qweight, qzeros, scales); },
       XGEMV_STATUS_INVALID_QSHAPE},
      {"AWQ: a symmetric weight", &w_symmetric,
       [&] { return xgemv_qweight_pack_awq(h, w_symmetric.get(), qweight, qzeros, scales); },
       XGEMV_STATUS_SUCCESS},
      {"AWQ: a permuted weight", &w_act_order,
       [&] { return xgemv_qweight_pack_awq(h, w_act_order.get(), qweight, qzeros, scales); },
       XGEMV_STATUS_SUCCESS},
      {"AWQ: an INT8 weight", &w_int8,
       [&] { return xgemv_qweight_pack_awq(h, w_int8.get(), qweight, qzeros, scales); },
       XGEMV_STATUS_SUCCESS},
  };
  for (const RefusedCall &c : calls) expect_refused(c);
}

TEST_F(QweightConversions, QuantizeAndDequantizeArgumentStatuses) {
  const xgemv_handle h = handle();
  const xgemv_qweight_info info = {XGEMV_QFORMAT_INT4, XGEMV_R_16F, XGEMV_R_16F, 24, 128, 64, 1, 0};
  xgemv_qweight_info permuted = info;
  permuted.permuted = 1;
  DeviceWeight weight(info), permuted_weight(permuted);
  GuardedDeviceBuffer<uint16_t> dense(24 * 128);
  GuardedDeviceBuffer<uint8_t> out(24 * 128 * 4);
  const std::vector<uint8_t> out_before = out.download();
  const RefusedCall calls[] = {
      {"quantize: NULL handle", &weight,
       [&] { return xgemv_qweight_quantize(nullptr, weight.get(), dense.data(), 128); },
       XGEMV_STATUS_INVALID_HANDLE},
      {"quantize: NULL weight", &weight,
       [&] { return xgemv_qweight_quantize(h, nullptr, dense.data(), 128); },
       XGEMV_STATUS_NULL_POINTER},
      {"quantize: NULL weights", &weight,
       [&] { return xgemv_qweight_quantize(h, weight.get(), nullptr, 128); },
       XGEMV_STATUS_NULL_POINTER},
      {"quantize: ldw < inputs", &weight,
       [&] { return xgemv_qweight_quantize(h, weight.get(), dense.data(), 127); },
       XGEMV_STATUS_INVALID_VALUE},
      {"quantize: a permuted weight", &permuted_weight,
       [&] { return xgemv_qweight_quantize(h, permuted_weight.get(), dense.data(), 128); },
       XGEMV_STATUS_INVALID_VALUE},
      {"dequantize: NULL handle", &weight,
       [&] {
         return xgemv_qweight_dequantize(nullptr, weight.get(), out.data(), 128, XGEMV_R_32F);
       },
       XGEMV_STATUS_INVALID_HANDLE},
      {"dequantize: NULL weight", &weight,
       [&] { return xgemv_qweight_dequantize(h, nullptr, out.data(), 128, XGEMV_R_32F); },
       XGEMV_STATUS_NULL_POINTER},
      {"dequantize: NULL out", &weight,
       [&] { return xgemv_qweight_dequantize(h, weight.get(), nullptr, 128, XGEMV_R_32F); },
       XGEMV_STATUS_NULL_POINTER},
      {"dequantize: ldw < inputs", &weight,
       [&] { return xgemv_qweight_dequantize(h, weight.get(), out.data(), 127, XGEMV_R_32F); },
       XGEMV_STATUS_INVALID_VALUE},
      {"dequantize: out_type fp64", &weight,
       [&] { return xgemv_qweight_dequantize(h, weight.get(), out.data(), 128, XGEMV_R_64F); },
       XGEMV_STATUS_INVALID_QFORMAT},
      {"dequantize: out_type 7", &weight,
       [&] {
         return xgemv_qweight_dequantize(h, weight.get(), out.data(), 128,
                                         static_cast<xgemv_datatype>(7));
       },
       XGEMV_STATUS_INVALID_QFORMAT},
  };
  for (const RefusedCall &c : calls) expect_refused(c);
  EXPECT_TRUE(out.download() == out_before) << "out changed";
}

}  // namespace
}  // namespace xgemv_test::quant
