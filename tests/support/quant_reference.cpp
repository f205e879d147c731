#include "quant_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace xgemv_test::quant {
namespace {

constexpr int64_t kTileOutputs = 16;
constexpr int64_t kTileBlockBytes = 512;  // one tile's k-block: 32 slots of 16 bytes
constexpr int kSlots = 32;
constexpr uint8_t kPaddingZeroPoint = 8;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool four_bit(const xgemv_qweight_info &info) { return info.format == XGEMV_QFORMAT_INT4; }

// The code of v = 0 in padding: q = 8 for 4-bit codes (the padding zero point is 8 too), 0 for
// 8-bit ones.
uint8_t padding_code(const xgemv_qweight_info &info) { return four_bit(info) ? 8 : 0; }

void store_u32(uint32_t value, uint8_t *bytes) {
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}
uint32_t load_u32(const uint8_t *bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= uint32_t{bytes[i]} << (8 * i);
  return value;
}

// Where one code of the codes part lies: byte `offset`, and for 4-bit codes the nibble at bit
// `shift` of that byte.
struct CodePosition {
  int64_t output, input;
  size_t offset;
  int shift;
};

// Calls f(position) for every code slot of the codes part, padding included: tile t, k-block b
// at (t * KB_count + b) * 512, slot l (g = l / 4, c = l % 4) holding outputs o0 = 16 t + g and
// o1 = o0 + 8 in four little-endian words u_s.
//  4-bit: word u_s holds inputs KB b + 16 s + 4 c + e; nibble j of the word is o0 e0, o1 e0,
//  o0 e2, o1 e2, o0 e1, o1 e1, o0 e3, o1 e3; nibble j lies in byte j / 2 at bit 4 (j % 2).
//  8-bit: words u_2s (o0) and u_2s+1 (o1) hold inputs KB b + 16 s + 4 c + e, byte e for input e.
template <class F>
void for_each_code_position(const xgemv_qweight_info &info, const LayoutSizes &sizes, F &&f) {
  const int64_t kb = k_block_inputs(info.format);
  constexpr int kNibbleInput[4] = {0, 2, 1, 3};  // e of nibbles (2i, 2i + 1)
  for (int64_t t = 0; t < sizes.row_tiles; ++t)
    for (int64_t b = 0; b < sizes.k_blocks; ++b) {
      const size_t block = size_t((t * sizes.k_blocks + b) * kTileBlockBytes);
      for (int l = 0; l < kSlots; ++l) {
        const int g = l / 4, c = l % 4;
        const size_t slot = block + size_t(l) * 16;
        for (int word = 0; word < 4; ++word) {
          const size_t word_offset = slot + size_t(word) * 4;
          if (four_bit(info)) {
            for (int j = 0; j < 8; ++j)
              f(CodePosition{16 * t + g + 8 * (j % 2),
                             kb * b + 16 * word + 4 * c + kNibbleInput[j / 2],
                             word_offset + size_t(j / 2), 4 * (j % 2)});
          } else {
            for (int e = 0; e < 4; ++e)
              f(CodePosition{16 * t + g + 8 * (word % 2), kb * b + 16 * (word / 2) + 4 * c + e,
                             word_offset + size_t(e), 0});
          }
        }
      }
    }
}

// The scale of output o for packed group j (0 for padding outputs and padding groups).
float packed_scale(const PlainWeight &w, int64_t o, int64_t j) {
  if (o >= w.info.outputs || j >= scale_columns(w.info)) return 0.0f;
  return w.scales[(o / outputs_per_scale(w.info)) * scale_columns(w.info) + j];
}
uint8_t packed_zero_point(const PlainWeight &w, int64_t o, int64_t j) {
  if (o >= w.info.outputs || j >= zero_point_columns(w.info)) return kPaddingZeroPoint;
  return w.zeros[o * zero_point_columns(w.info) + j];
}

void check_layout(const xgemv_qweight_info &info, const xgemv_qweight_layout &layout,
                  const LayoutSizes &sizes) {
  if (layout.row_tiles != sizes.row_tiles || layout.k_blocks != sizes.k_blocks ||
      layout.scale_groups != sizes.scale_groups || layout.codes_bytes != sizes.codes_bytes ||
      layout.scales_bytes != sizes.scales_bytes || layout.zeros_bytes != sizes.zeros_bytes ||
      layout.permutation_bytes != sizes.permutation_bytes)
    throw std::invalid_argument("quant reference: the layout is not the header's for " +
                                describe(info));
  for (const auto &[offset, bytes] : {std::pair{layout.codes_offset, layout.codes_bytes},
                                      {layout.scales_offset, layout.scales_bytes},
                                      {layout.zeros_offset, layout.zeros_bytes},
                                      {layout.permutation_offset, layout.permutation_bytes}})
    if (bytes != 0 && offset + bytes > layout.bytes)
      throw std::invalid_argument("quant reference: a part lies beyond the storage");
}

void check_storage(const std::vector<uint8_t> &storage, const xgemv_qweight_info &info,
                   const xgemv_qweight_layout &layout) {
  check_layout(info, layout, expected_layout_sizes(info));
  if (storage.size() != layout.bytes)
    throw std::invalid_argument("quant reference: storage of the wrong size");
}

void require_int4(const xgemv_qweight_info &info, const char *what) {
  if (!four_bit(info) || info.outputs % 8 != 0 || info.inputs % 8 != 0)
    throw std::invalid_argument(std::string(what) +
                                ": 4-bit weights with outputs and inputs multiples of 8 only");
}

// The packed index k of every original input i (the inverse of the permutation).
std::vector<int64_t> packed_index(const PlainWeight &w) {
  std::vector<int64_t> packed(static_cast<size_t>(w.info.inputs));
  for (int64_t k = 0; k < w.info.inputs; ++k)
    packed[size_t(w.info.permuted ? w.permutation[size_t(k)] : k)] = k;
  return packed;
}

int nibble(int32_t word, int i) { return (uint32_t(word) >> (4 * i)) & 0xF; }
int32_t with_nibble(int32_t word, int i, int value) {
  return int32_t(uint32_t(word) | (uint32_t(value & 0xF) << (4 * i)));
}

constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

float max_of(float a, float b) { return a < b ? b : a; }
float min_of(float a, float b) { return b < a ? b : a; }
float clamp_float(float v, float lo, float hi) { return v < lo ? lo : hi < v ? hi : v; }

}  // namespace

// --- element types ---------------------------------------------------------------------------

size_t datatype_bytes(xgemv_datatype type) {
  return type == XGEMV_R_64F || type == XGEMV_R_64I ? 8
         : type == XGEMV_R_32F || type == XGEMV_R_32I ? 4
                                                      : 2;
}

const char *datatype_name(xgemv_datatype type) {
  switch (type) {
    case XGEMV_R_32F: return "fp32";
    case XGEMV_R_64F: return "fp64";
    case XGEMV_R_16F: return "fp16";
    case XGEMV_R_16BF: return "bf16";
    case XGEMV_R_32I: return "int32";
    case XGEMV_R_64I: return "int64";
  }
  return "unknown type";
}

float round_to(xgemv_datatype type, float value) {
  switch (type) {
    case XGEMV_R_16F: return __half2float(__float2half_rn(value));
    case XGEMV_R_16BF: return __bfloat162float(__float2bfloat16_rn(value));
    case XGEMV_R_32F: case XGEMV_R_64F: break;  // exact
    case XGEMV_R_32I: case XGEMV_R_64I: break;  // routing ids, never values
  }
  return value;
}

void store(xgemv_datatype type, float value, uint8_t *bytes) {
  switch (type) {
    case XGEMV_R_16F: {
      const __half h = __float2half_rn(value);
      std::memcpy(bytes, &h, 2);
      return;
    }
    case XGEMV_R_16BF: {
      const __nv_bfloat16 b = __float2bfloat16_rn(value);
      std::memcpy(bytes, &b, 2);
      return;
    }
    case XGEMV_R_64F: {
      const double d = value;
      std::memcpy(bytes, &d, 8);
      return;
    }
    case XGEMV_R_32F: break;
    case XGEMV_R_32I: case XGEMV_R_64I: break;  // routing ids, never values
  }
  std::memcpy(bytes, &value, 4);
}

float load(xgemv_datatype type, const uint8_t *bytes) {
  switch (type) {
    case XGEMV_R_16F: {
      __half h;
      std::memcpy(&h, bytes, 2);
      return __half2float(h);
    }
    case XGEMV_R_16BF: {
      __nv_bfloat16 b;
      std::memcpy(&b, bytes, 2);
      return __bfloat162float(b);
    }
    case XGEMV_R_64F: {
      double d;
      std::memcpy(&d, bytes, 8);
      return float(d);
    }
    case XGEMV_R_32F: break;
    case XGEMV_R_32I: case XGEMV_R_64I: break;  // routing ids, never values
  }
  float value;
  std::memcpy(&value, bytes, 4);
  return value;
}

std::vector<uint8_t> to_bytes(xgemv_datatype type, const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * datatype_bytes(type));
  for (size_t i = 0; i < values.size(); ++i)
    store(type, values[i], bytes.data() + i * datatype_bytes(type));
  return bytes;
}

// --- fp8 e4m3 --------------------------------------------------------------------------------

double e4m3_value(uint8_t code) {
  if (is_e4m3_nan(code)) return std::numeric_limits<double>::quiet_NaN();
  const int exponent = (code >> 3) & 0xF, mantissa = code & 0x7;
  const double magnitude = exponent > 0 ? std::ldexp(1.0 + mantissa / 8.0, exponent - 7)
                                        : std::ldexp(mantissa / 8.0, -6);
  return (code & 0x80) ? -magnitude : magnitude;
}

uint8_t e4m3_code(float value) {
  if (std::isnan(value)) return 0x7F;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const double magnitude = std::fabs(double(value));
  if (magnitude >= 448.0) return sign | 0x7E;  // saturated: 448 is S.1111.110
  // Spacing 2^(exponent - 3) within a binade, 2^-9 among the subnormals (exponent -6): the
  // magnitude in those units, rounded to nearest even (exact scaling, one rounding).
  int exponent = magnitude == 0 ? -6 : std::max(std::ilogb(magnitude), -6);
  int units = int(std::nearbyint(std::ldexp(magnitude, 3 - exponent)));
  if (units == 16) {  // rounded up into the next binade
    ++exponent;
    units = 8;
  }
  if (units < 8) return sign | uint8_t(units);  // subnormal (or zero): E = 0, M = units
  return sign | uint8_t(((exponent + 7) << 3) | (units - 8));
}

// --- formats and the layout's formulas -------------------------------------------------------

const char *format_name(xgemv_qformat format) {
  switch (format) {
    case XGEMV_QFORMAT_INT4: return "INT4";
    case XGEMV_QFORMAT_INT8: return "INT8";
    case XGEMV_QFORMAT_FP8_E4M3: return "FP8_E4M3";
    case XGEMV_QFORMAT_FP8_E4M3_BLOCK: return "FP8_E4M3_BLOCK";
  }
  return "unknown format";
}

std::string describe(const xgemv_qweight_info &info) {
  std::ostringstream text;
  text << format_name(info.format);
  if (four_bit(info))
    text << " g" << info.group_size << (info.zero_points ? " zero points" : " symmetric")
         << (info.permuted ? " permuted" : "");
  text << ", " << datatype_name(info.activation_type) << " activations, "
       << datatype_name(info.scale_type) << " scales, " << info.outputs << " x " << info.inputs;
  return text.str();
}

int64_t k_block_inputs(xgemv_qformat format) { return format == XGEMV_QFORMAT_INT4 ? 64 : 32; }

int64_t inputs_per_scale(const xgemv_qweight_info &info) {
  switch (info.format) {
    case XGEMV_QFORMAT_INT4: return info.group_size;
    case XGEMV_QFORMAT_FP8_E4M3_BLOCK: return 128;
    default: return info.inputs;
  }
}

int64_t outputs_per_scale(const xgemv_qweight_info &info) {
  return info.format == XGEMV_QFORMAT_FP8_E4M3_BLOCK ? 128 : 1;
}

int64_t scale_rows(const xgemv_qweight_info &info) {
  return ceil_div(info.outputs, outputs_per_scale(info));
}
int64_t scale_columns(const xgemv_qweight_info &info) {
  return ceil_div(info.inputs, inputs_per_scale(info));
}
int64_t zero_point_columns(const xgemv_qweight_info &info) {
  return four_bit(info) ? info.inputs / info.group_size : 0;
}

LayoutSizes expected_layout_sizes(const xgemv_qweight_info &info) {
  const int64_t kb = k_block_inputs(info.format);
  LayoutSizes s;
  s.row_tiles = ceil_div(info.outputs, kTileOutputs);
  s.k_blocks = ceil_div(info.inputs, kb);
  // G = KB_count * KB / group, group: group_size, 128, or KB_count * KB (one group). For the
  // 128-input blocks over padded inputs that are no multiple of 128, the last group is partial.
  const int64_t padded_inputs = s.k_blocks * kb;
  const int64_t group = four_bit(info)                                ? info.group_size
                        : info.format == XGEMV_QFORMAT_FP8_E4M3_BLOCK ? 128
                                                                      : padded_inputs;
  s.scale_groups = ceil_div(padded_inputs, group);
  s.codes_bytes = size_t(s.row_tiles * s.k_blocks * kTileBlockBytes);
  s.scales_bytes =
      size_t(s.row_tiles * s.scale_groups * kTileOutputs) * datatype_bytes(info.scale_type);
  s.zeros_bytes = info.zero_points ? size_t(s.row_tiles * s.scale_groups * 8) : 0;
  s.permutation_bytes = info.permuted ? size_t(info.inputs) * 4 : 0;
  return s;
}

// --- a weight in plain form ------------------------------------------------------------------

size_t PlainWeight::scale_index(int64_t o, int64_t k) const {
  return size_t((o / outputs_per_scale(info)) * scale_columns(info) + k / inputs_per_scale(info));
}
size_t PlainWeight::zero_point_index(int64_t o, int64_t k) const {
  return size_t(o * zero_point_columns(info) + k / info.group_size);
}
float PlainWeight::scale(int64_t o, int64_t k) const { return scales[scale_index(o, k)]; }
int PlainWeight::zero_point(int64_t o, int64_t k) const {
  return zeros[zero_point_index(o, k)] & 0xF;
}

double PlainWeight::code_value(int64_t o, int64_t k) const {
  const uint8_t q = codes[o * info.inputs + k];
  switch (info.format) {
    case XGEMV_QFORMAT_INT4: return (q & 0xF) - (info.zero_points ? zero_point(o, k) : 8);
    case XGEMV_QFORMAT_INT8: return static_cast<int8_t>(q);
    default: return e4m3_value(q);
  }
}

PlainWeight make_plain_weight(const xgemv_qweight_info &info) {
  PlainWeight w;
  w.info = info;
  w.codes.assign(size_t(info.outputs * info.inputs), padding_code(info));
  w.scales.assign(size_t(scale_rows(info) * scale_columns(info)), 0.0f);
  if (info.zero_points)
    w.zeros.assign(size_t(info.outputs * zero_point_columns(info)), kPaddingZeroPoint);
  if (info.permuted) {
    w.permutation.resize(size_t(info.inputs));
    for (int64_t k = 0; k < info.inputs; ++k) w.permutation[size_t(k)] = int32_t(k);
  }
  return w;
}

std::vector<int32_t> random_permutation(int64_t count, RandomSource &random) {
  std::vector<int32_t> p(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) p[size_t(i)] = int32_t(i);
  for (int64_t i = count - 1; i > 0; --i) std::swap(p[size_t(i)], p[size_t(random.integer(0, i))]);
  return p;
}

std::vector<int32_t> act_order_permutation(int64_t inputs, int64_t group_size,
                                           RandomSource &random) {
  // A random group for every input: a shuffled list of group_size copies of each group.
  std::vector<int32_t> group_of(static_cast<size_t>(inputs));
  const std::vector<int32_t> order = random_permutation(inputs, random);
  for (int64_t position = 0; position < inputs; ++position)
    group_of[size_t(order[size_t(position)])] = int32_t(position / group_size);
  std::vector<int32_t> p(static_cast<size_t>(inputs));
  for (int64_t i = 0; i < inputs; ++i) p[size_t(i)] = int32_t(i);
  std::stable_sort(p.begin(), p.end(),
                   [&](int32_t a, int32_t b) { return group_of[size_t(a)] < group_of[size_t(b)]; });
  return p;
}

PlainWeight random_plain_weight(const xgemv_qweight_info &info, RandomSource &random) {
  PlainWeight w = make_plain_weight(info);
  for (uint8_t &q : w.codes) {
    switch (info.format) {
      case XGEMV_QFORMAT_INT4: q = uint8_t(random.integer(0, 15)); break;
      case XGEMV_QFORMAT_INT8: q = uint8_t(random.integer(0, 255)); break;
      default:
        do q = uint8_t(random.integer(0, 255));
        while (is_e4m3_nan(q));
    }
  }
  const double max_v = four_bit(info)                      ? (info.zero_points ? 15 : 8)
                       : info.format == XGEMV_QFORMAT_INT8 ? 128
                                                           : 448;
  for (float &s : w.scales) {
    const double magnitude = random.uniform(0.25, 2.0) / max_v;
    s = round_to(info.scale_type, float(random.integer(0, 1) ? magnitude : -magnitude));
  }
  for (uint8_t &z : w.zeros) z = uint8_t(random.integer(0, 15));
  if (info.permuted) w.permutation = random_permutation(info.inputs, random);
  return w;
}

std::vector<double> weight_values(const PlainWeight &w) {
  const int64_t inputs = w.info.inputs;
  std::vector<double> values(static_cast<size_t>(w.info.outputs * inputs));
  for (int64_t o = 0; o < w.info.outputs; ++o)
    for (int64_t k = 0; k < inputs; ++k) {
      const int64_t input = w.info.permuted ? w.permutation[size_t(k)] : k;
      values[size_t(o * inputs + input)] = w.code_value(o, k) * double(w.scale(o, k));
    }
  return values;
}

// --- the packed layout -----------------------------------------------------------------------

std::vector<uint8_t> pack_storage(const PlainWeight &w, const xgemv_qweight_layout &layout) {
  const xgemv_qweight_info &info = w.info;
  const LayoutSizes sizes = expected_layout_sizes(info);
  check_layout(info, layout, sizes);
  std::vector<uint8_t> storage(layout.bytes, 0);

  uint8_t *codes = storage.data() + layout.codes_offset;
  for_each_code_position(info, sizes, [&](const CodePosition &p) {
    const bool real = p.output < info.outputs && p.input < info.inputs;
    const uint8_t q = real ? w.codes[size_t(p.output * info.inputs + p.input)] : padding_code(info);
    if (four_bit(info))
      codes[p.offset] = uint8_t(codes[p.offset] | ((q & 0xF) << p.shift));
    else
      codes[p.offset] = q;
  });

  const size_t scale_bytes = datatype_bytes(info.scale_type);
  for (int64_t t = 0; t < sizes.row_tiles; ++t)
    for (int64_t j = 0; j < sizes.scale_groups; ++j)
      for (int64_t r = 0; r < kTileOutputs; ++r) {
        const size_t index = size_t((t * sizes.scale_groups + j) * kTileOutputs + r);
        store(info.scale_type, packed_scale(w, kTileOutputs * t + r, j),
              storage.data() + layout.scales_offset + index * scale_bytes);
        if (info.zero_points) {
          uint8_t &byte =
              storage[layout.zeros_offset + size_t((t * sizes.scale_groups + j) * 8 + r / 2)];
          byte = uint8_t(byte |
                         ((packed_zero_point(w, kTileOutputs * t + r, j) & 0xF) << (4 * (r % 2))));
        }
      }

  for (int64_t k = 0; k < (info.permuted ? info.inputs : 0); ++k)
    store_u32(uint32_t(w.permutation[size_t(k)]),
              storage.data() + layout.permutation_offset + size_t(k) * 4);
  return storage;
}

PlainWeight unpack_storage(const std::vector<uint8_t> &storage, const xgemv_qweight_info &info,
                           const xgemv_qweight_layout &layout) {
  check_storage(storage, info, layout);
  const LayoutSizes sizes = expected_layout_sizes(info);
  PlainWeight w = make_plain_weight(info);
  const uint8_t *codes = storage.data() + layout.codes_offset;
  for_each_code_position(info, sizes, [&](const CodePosition &p) {
    if (p.output >= info.outputs || p.input >= info.inputs) return;
    w.codes[size_t(p.output * info.inputs + p.input)] =
        four_bit(info) ? uint8_t((codes[p.offset] >> p.shift) & 0xF) : codes[p.offset];
  });
  // The scale of each plain row is read where its first output keeps it.
  const size_t scale_bytes = datatype_bytes(info.scale_type);
  for (int64_t row = 0; row < scale_rows(info); ++row)
    for (int64_t j = 0; j < scale_columns(info); ++j) {
      const int64_t o = row * outputs_per_scale(info);
      const int64_t index =
          ((o / kTileOutputs) * sizes.scale_groups + j) * kTileOutputs + o % kTileOutputs;
      w.scales[size_t(row * scale_columns(info) + j)] = load(
          info.scale_type, storage.data() + layout.scales_offset + size_t(index) * scale_bytes);
    }
  for (int64_t o = 0; o < (info.zero_points ? info.outputs : 0); ++o)
    for (int64_t j = 0; j < zero_point_columns(info); ++j) {
      const int64_t r = o % kTileOutputs;
      const uint8_t byte =
          storage[layout.zeros_offset +
                  size_t(((o / kTileOutputs) * sizes.scale_groups + j) * 8 + r / 2)];
      w.zeros[size_t(o * zero_point_columns(info) + j)] = uint8_t((byte >> (4 * (r % 2))) & 0xF);
    }
  for (int64_t k = 0; k < (info.permuted ? info.inputs : 0); ++k)
    w.permutation[size_t(k)] =
        int32_t(load_u32(storage.data() + layout.permutation_offset + size_t(k) * 4));
  return w;
}

std::vector<double> dequantize_storage(const std::vector<uint8_t> &storage,
                                       const xgemv_qweight_info &info,
                                       const xgemv_qweight_layout &layout) {
  return weight_values(unpack_storage(storage, info, layout));
}

std::vector<uint8_t> dequantized_bytes(const std::vector<double> &values, int64_t outputs,
                                       int64_t inputs, int64_t ldw, xgemv_datatype out_type,
                                       uint8_t fill) {
  const size_t size = datatype_bytes(out_type);
  std::vector<uint8_t> bytes(size_t(outputs * ldw) * size, fill);
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t k = 0; k < inputs; ++k)
      store(out_type, static_cast<float>(values[size_t(o * inputs + k)]),
            bytes.data() + size_t(o * ldw + k) * size);
  return bytes;
}

std::string padding_errors(const std::vector<uint8_t> &storage, const xgemv_qweight_info &info,
                           const xgemv_qweight_layout &layout) {
  check_storage(storage, info, layout);
  const LayoutSizes sizes = expected_layout_sizes(info);
  std::ostringstream errors;
  int count = 0;
  const auto report = [&](const std::string &what) {
    if (count++ < 5) errors << "\n  " << what;
  };
  const uint8_t *codes = storage.data() + layout.codes_offset;
  for_each_code_position(info, sizes, [&](const CodePosition &p) {
    if (p.output < info.outputs && p.input < info.inputs) return;
    const int q = four_bit(info) ? (codes[p.offset] >> p.shift) & 0xF : codes[p.offset];
    if (q != padding_code(info))
      report("padding code of output " + std::to_string(p.output) + ", input " +
             std::to_string(p.input) + " is " + std::to_string(q));
  });
  const size_t scale_bytes = datatype_bytes(info.scale_type);
  for (int64_t t = 0; t < sizes.row_tiles; ++t)
    for (int64_t j = 0; j < sizes.scale_groups; ++j)
      for (int64_t r = 0; r < kTileOutputs; ++r) {
        const int64_t o = kTileOutputs * t + r;
        const size_t index = size_t((t * sizes.scale_groups + j) * kTileOutputs + r);
        if (o >= info.outputs || j >= scale_columns(info)) {
          const uint8_t *scale = storage.data() + layout.scales_offset + index * scale_bytes;
          if (std::any_of(scale, scale + scale_bytes, [](uint8_t b) { return b != 0; }))
            report("padding scale of output " + std::to_string(o) + ", group " + std::to_string(j) +
                   " is not 0");
        }
        if (info.zero_points && (o >= info.outputs || j >= zero_point_columns(info))) {
          const uint8_t byte =
              storage[layout.zeros_offset + size_t((t * sizes.scale_groups + j) * 8 + r / 2)];
          const int z = (byte >> (4 * (r % 2))) & 0xF;
          if (z != kPaddingZeroPoint)
            report("padding zero point of output " + std::to_string(o) + ", group " +
                   std::to_string(j) + " is " + std::to_string(z));
        }
      }
  if (count > 5) errors << "\n  (" << count << " in all)";
  return errors.str();
}

// --- checkpoints -----------------------------------------------------------------------------

GptqCheckpoint to_gptq(const PlainWeight &w, bool zeros_minus_one) {
  const xgemv_qweight_info &info = w.info;
  require_int4(info, "to_gptq");
  const int64_t outputs = info.outputs, inputs = info.inputs, groups = zero_point_columns(info);
  GptqCheckpoint ckpt;
  const std::vector<int64_t> packed = packed_index(w);
  if (info.permuted) {
    ckpt.g_idx.resize(size_t(inputs));
    for (int64_t k = 0; k < inputs; ++k)
      ckpt.g_idx[size_t(w.permutation[size_t(k)])] = int32_t(k / info.group_size);
    for (int64_t k = 1; k < inputs; ++k)
      if (k % info.group_size != 0 && w.permutation[size_t(k)] < w.permutation[size_t(k - 1)])
        throw std::invalid_argument("to_gptq: the permutation is not the stable sort of groups");
  }
  ckpt.qweight.assign(size_t(inputs / 8 * outputs), 0);
  for (int64_t r = 0; r < inputs / 8; ++r)
    for (int64_t o = 0; o < outputs; ++o)
      for (int i = 0; i < 8; ++i) {
        int32_t &word = ckpt.qweight[size_t(r * outputs + o)];
        word = with_nibble(word, i, w.codes[size_t(o * inputs + packed[size_t(8 * r + i)])]);
      }
  ckpt.scales.resize(size_t(groups * outputs));
  for (int64_t j = 0; j < groups; ++j)
    for (int64_t o = 0; o < outputs; ++o)
      ckpt.scales[size_t(j * outputs + o)] = w.scales[size_t(o * groups + j)];
  if (info.zero_points) {
    ckpt.qzeros.assign(size_t(groups * outputs / 8), 0);
    for (int64_t j = 0; j < groups; ++j)
      for (int64_t m = 0; m < outputs / 8; ++m)
        for (int i = 0; i < 8; ++i) {
          const int z = w.zeros[size_t((8 * m + i) * groups + j)];
          int32_t &word = ckpt.qzeros[size_t(j * outputs / 8 + m)];
          word = with_nibble(word, i, zeros_minus_one ? (z + 15) % 16 : z);
        }
  }
  return ckpt;
}

PlainWeight from_gptq(const GptqCheckpoint &ckpt, const xgemv_qweight_info &info,
                      bool zeros_minus_one) {
  require_int4(info, "from_gptq");
  const int64_t outputs = info.outputs, inputs = info.inputs, groups = zero_point_columns(info);
  PlainWeight w = make_plain_weight(info);
  if (info.permuted) {
    for (int64_t i = 0; i < inputs; ++i) w.permutation[size_t(i)] = int32_t(i);
    std::stable_sort(w.permutation.begin(), w.permutation.end(), [&](int32_t a, int32_t b) {
      return ckpt.g_idx[size_t(a)] < ckpt.g_idx[size_t(b)];
    });
  }
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t k = 0; k < inputs; ++k) {
      const int64_t input = info.permuted ? w.permutation[size_t(k)] : k;
      w.codes[size_t(o * inputs + k)] =
          uint8_t(nibble(ckpt.qweight[size_t(input / 8 * outputs + o)], int(input % 8)));
    }
  for (int64_t j = 0; j < groups; ++j)
    for (int64_t o = 0; o < outputs; ++o) {
      w.scales[size_t(o * groups + j)] = ckpt.scales[size_t(j * outputs + o)];
      if (info.zero_points) {
        const int stored = nibble(ckpt.qzeros[size_t(j * outputs / 8 + o / 8)], int(o % 8));
        w.zeros[size_t(o * groups + j)] = uint8_t(zeros_minus_one ? (stored + 1) % 16 : stored);
      }
    }
  return w;
}

AwqCheckpoint to_awq(const PlainWeight &w) {
  const xgemv_qweight_info &info = w.info;
  require_int4(info, "to_awq");
  if (!info.zero_points || info.permuted)
    throw std::invalid_argument("to_awq: unpermuted weights with zero points only");
  const int64_t outputs = info.outputs, inputs = info.inputs, groups = zero_point_columns(info);
  AwqCheckpoint ckpt;
  ckpt.qweight.assign(size_t(inputs * outputs / 8), 0);
  ckpt.qzeros.assign(size_t(groups * outputs / 8), 0);
  ckpt.scales.resize(size_t(groups * outputs));
  for (int64_t m = 0; m < outputs / 8; ++m)
    for (int i = 0; i < 8; ++i) {
      const int64_t o = 8 * m + kAwqOrder[i];
      for (int64_t k = 0; k < inputs; ++k) {
        int32_t &word = ckpt.qweight[size_t(k * outputs / 8 + m)];
        word = with_nibble(word, i, w.codes[size_t(o * inputs + k)]);
      }
      for (int64_t j = 0; j < groups; ++j) {
        int32_t &word = ckpt.qzeros[size_t(j * outputs / 8 + m)];
        word = with_nibble(word, i, w.zeros[size_t(o * groups + j)]);
      }
    }
  for (int64_t j = 0; j < groups; ++j)
    for (int64_t o = 0; o < outputs; ++o)
      ckpt.scales[size_t(j * outputs + o)] = w.scales[size_t(o * groups + j)];
  return ckpt;
}

PlainWeight from_awq(const AwqCheckpoint &ckpt, const xgemv_qweight_info &info) {
  require_int4(info, "from_awq");
  const int64_t outputs = info.outputs, inputs = info.inputs, groups = zero_point_columns(info);
  PlainWeight w = make_plain_weight(info);
  for (int64_t m = 0; m < outputs / 8; ++m)
    for (int i = 0; i < 8; ++i) {
      const int64_t o = 8 * m + kAwqOrder[i];
      for (int64_t k = 0; k < inputs; ++k)
        w.codes[size_t(o * inputs + k)] =
            uint8_t(nibble(ckpt.qweight[size_t(k * outputs / 8 + m)], i));
      for (int64_t j = 0; j < groups; ++j)
        w.zeros[size_t(o * groups + j)] =
            uint8_t(nibble(ckpt.qzeros[size_t(j * outputs / 8 + m)], i));
    }
  for (int64_t j = 0; j < groups; ++j)
    for (int64_t o = 0; o < outputs; ++o)
      w.scales[size_t(o * groups + j)] = ckpt.scales[size_t(j * outputs + o)];
  return w;
}

// --- the quantizer ---------------------------------------------------------------------------

PlainWeight quantize(const std::vector<float> &weights, const xgemv_qweight_info &info) {
  if (info.permuted) throw std::invalid_argument("quantize: not for permuted weights");
  PlainWeight w = make_plain_weight(info);
  const int64_t inputs = info.inputs;
  const int64_t group_outputs = outputs_per_scale(info), group_inputs = inputs_per_scale(info);
  const float divisor = four_bit(info)                      ? (info.zero_points ? 15.0f : 7.0f)
                        : info.format == XGEMV_QFORMAT_INT8 ? 127.0f
                                                            : 448.0f;
  for (int64_t row = 0; row < scale_rows(info); ++row)
    for (int64_t column = 0; column < scale_columns(info); ++column) {
      const int64_t o_begin = row * group_outputs, k_begin = column * group_inputs;
      const int64_t o_end = std::min(o_begin + group_outputs, info.outputs);
      const int64_t k_end = std::min(k_begin + group_inputs, inputs);
      // max|w|, or max and min taken over the group and 0 (exact: no rounding).
      float largest = 0.0f, smallest = 0.0f, max_magnitude = 0.0f;
      for (int64_t o = o_begin; o < o_end; ++o)
        for (int64_t k = k_begin; k < k_end; ++k) {
          const float v = weights[size_t(o * inputs + k)];
          largest = max_of(largest, v);
          smallest = min_of(smallest, v);
          max_magnitude = max_of(max_magnitude, std::fabs(v));
        }
      const float range = info.zero_points ? largest - smallest : max_magnitude;
      const float s = round_to(info.scale_type, range / divisor);
      w.scales[size_t(row * scale_columns(info) + column)] = s;
      int zero_point = 8;
      if (info.zero_points && s != 0)
        zero_point = int(clamp_float(std::rint(-smallest / s), 0.0f, 15.0f));
      if (info.zero_points)
        w.zeros[size_t(row * scale_columns(info) + column)] = uint8_t(zero_point);
      for (int64_t o = o_begin; o < o_end; ++o)
        for (int64_t k = k_begin; k < k_end; ++k) {
          const float v = weights[size_t(o * inputs + k)];
          uint8_t &q = w.codes[size_t(o * inputs + k)];
          if (s == 0) {
            q = padding_code(info);  // v = 0 (with zero points q = z = 8)
          } else if (four_bit(info) && info.zero_points) {
            q = uint8_t(clamp_float(std::rint(v / s) + float(zero_point), 0.0f, 15.0f));
          } else if (four_bit(info)) {
            q = uint8_t(int(clamp_float(std::rint(v / s), -8.0f, 7.0f)) + 8);
          } else if (info.format == XGEMV_QFORMAT_INT8) {
            q = uint8_t(int8_t(clamp_float(std::rint(v / s), -127.0f, 127.0f)));
          } else {
            q = e4m3_code(v / s);
          }
        }
    }
  return w;
}

std::string quantized_differences(const PlainWeight &got, const PlainWeight &want) {
  const xgemv_qweight_info &info = want.info;
  std::ostringstream differences;
  int count = 0;
  const auto report = [&](const std::string &what) {
    if (count++ < 5) differences << "\n  " << what;
  };
  for (size_t i = 0; i < want.scales.size(); ++i)
    if (std::memcmp(&got.scales[i], &want.scales[i], sizeof(float)) != 0)
      report("scale " + std::to_string(i) + " is " + std::to_string(got.scales[i]) + ", expected " +
             std::to_string(want.scales[i]));
  for (int64_t o = 0; o < info.outputs; ++o)
    for (int64_t k = 0; k < info.inputs; ++k) {
      const size_t i = size_t(o * info.inputs + k);
      const std::string where = "output " + std::to_string(o) + ", input " + std::to_string(k);
      if (want.scale(o, k) == 0) {
        if (got.code_value(o, k) != 0)
          report(where + " (a group of scale 0): v = " + std::to_string(got.code_value(o, k)));
        continue;
      }
      // The two e4m3 zeros both encode v = 0 (a value has no sign of zero).
      const bool both_zero = info.format != XGEMV_QFORMAT_INT4 &&
                             info.format != XGEMV_QFORMAT_INT8 && got.code_value(o, k) == 0 &&
                             want.code_value(o, k) == 0;
      if (got.codes[i] != want.codes[i] && !both_zero)
        report(where + ": code " + std::to_string(got.codes[i]) + ", expected " +
               std::to_string(want.codes[i]));
      if (info.zero_points && k % info.group_size == 0 &&
          got.zero_point(o, k) != want.zero_point(o, k))
        report(where + ": zero point " + std::to_string(got.zero_point(o, k)) + ", expected " +
               std::to_string(want.zero_point(o, k)));
    }
  if (count > 5) differences << "\n  (" << count << " in all)";
  return differences.str();
}

// --- the GEMV --------------------------------------------------------------------------------

double qgemv_error_factor(int64_t inputs, xgemv_datatype y_type) {
  const double u32 = 0x1p-24;
  const double u_y = y_type == XGEMV_R_16F ? 0x1p-11 : y_type == XGEMV_R_16BF ? 0x1p-8 : u32;
  return 2 * (double(inputs + 4) * u32) + u_y;
}

}  // namespace xgemv_test::quant
