#include "core/npy.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "core/file_io.h"
#include "core/shape.h"

namespace qtune {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kPreambleV1 = 10;  // magic, 2 version bytes, uint16 header length
constexpr size_t kPreambleV2 = 12;  // magic, 2 version bytes, uint32 header length
constexpr size_t kDataAlignment = 64;

Status Error(StatusCode code, const std::string& source, const std::string& message) {
  return Status(code, "'" + source + "': " + message);
}

struct DtypeSpelling {
  std::string_view code;  // without the byte-order character, e.g. "f4"
  DataType dtype;
  std::string_view written;  // how we write it
};

constexpr DtypeSpelling kDtypes[] = {
    {"f2", DataType::kFloat16, "<f2"}, {"f4", DataType::kFloat32, "<f4"},
    {"f8", DataType::kFloat64, "<f8"}, {"i1", DataType::kInt8, "|i1"},
    {"u1", DataType::kUint8, "|u1"},   {"i2", DataType::kInt16, "<i2"},
    {"u2", DataType::kUint16, "<u2"},  {"i4", DataType::kInt32, "<i4"},
    {"u4", DataType::kUint32, "<u4"},  {"i8", DataType::kInt64, "<i8"},
    {"u8", DataType::kUint64, "<u8"},  {"b1", DataType::kBool, "|b1"},
};

constexpr std::string_view kWhatToDo =
    "qtune reads float16/32/64, int8/16/32/64, uint8/16/32/64 and bool arrays; convert "
    "with a.astype(np.float32) (or another of these) and save again";

StatusOr<DataType> ParseDescr(const std::string& descr, const std::string& source) {
  if (descr.size() < 2) {
    return Error(StatusCode::kUnimplemented, source,
                 "unsupported dtype '" + descr + "'; " + std::string(kWhatToDo));
  }
  const char order = descr[0];
  const std::string_view code = std::string_view(descr).substr(1);
  const bool one_byte = code.size() == 2 && code[1] == '1';
  for (const DtypeSpelling& d : kDtypes) {
    if (d.code != code) continue;
    if (order == '<' || order == '|' || order == '=' || (one_byte && order == '>')) {
      return d.dtype;
    }
    if (order == '>') {
      return Error(StatusCode::kUnimplemented, source,
                   "array is big-endian ('" + descr +
                       "'); qtune reads little-endian data: save it with "
                       "a.astype(a.dtype.newbyteorder('<'))");
    }
    break;
  }
  return Error(StatusCode::kUnimplemented, source,
               "unsupported dtype '" + descr + "'; " + std::string(kWhatToDo));
}

// A strict parser for the header dict numpy writes, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (512, 1, 28, 28), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Status Parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Bad("the header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (!Consume(':')) return Bad("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr" && !have_descr) {
        if (Peek() == '[') {
          return Error(StatusCode::kUnimplemented, source_,
                       "structured (record) dtypes are not supported; " + std::string(kWhatToDo));
        }
        RETURN_IF_ERROR(ParseString(descr));
        have_descr = true;
      } else if (key == "fortran_order" && !have_order) {
        RETURN_IF_ERROR(ParseBool(fortran_order));
        have_order = true;
      } else if (key == "shape" && !have_shape) {
        RETURN_IF_ERROR(ParseTuple(shape));
        have_shape = true;
      } else {
        return Bad("unexpected or repeated key '" + key + "'");
      }
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Bad("expected ',' or '}' after the value of '" + key + "'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Bad("unexpected text after the closing '}'");
    if (!have_descr || !have_order || !have_shape) {
      return Bad("the header must have the keys 'descr', 'fortran_order' and 'shape'");
    }
    return Status::Ok();
  }

 private:
  Status Bad(const std::string& what) const {
    return Error(StatusCode::kInvalidArgument, source_,
                 "the .npy header is not a valid dict (" + what + " at offset " +
                     std::to_string(pos_) + "); the file is corrupt or not written by numpy");
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Status ParseString(std::string* out) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Bad("expected a quoted string");
    ++pos_;
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Bad("unterminated string");
    std::string_view body = text_.substr(pos_, end - pos_);
    if (body.find('\\') != std::string_view::npos || body.find('\n') != std::string_view::npos) {
      return Bad("unsupported character in string");
    }
    *out = std::string(body);
    pos_ = end + 1;
    return Status::Ok();
  }
  Status ParseBool(bool* out) {
    if (text_.substr(pos_, 4) == "True") {
      *out = true;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "False") {
      *out = false;
      pos_ += 5;
    } else {
      return Bad("expected True or False");
    }
    return Status::Ok();
  }
  Status ParseInt(int64_t* out) {
    const bool negative = Consume('-');
    if (Peek() < '0' || Peek() > '9') return Bad("expected an integer");
    uint64_t value = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      value = value * 10 + static_cast<uint64_t>(Peek() - '0');
      if (value > static_cast<uint64_t>(INT64_MAX)) return Bad("integer too large");
      ++pos_;
    }
    Consume('L');  // Python 2 long literal
    *out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
    return Status::Ok();
  }
  Status ParseTuple(std::vector<int64_t>* out) {
    out->clear();
    if (!Consume('(')) return Bad("expected a tuple for 'shape'");
    while (true) {
      SkipSpace();
      if (Consume(')')) return Status::Ok();
      if (out->size() >= 64) return Bad("more than 64 dimensions");
      int64_t v = 0;
      RETURN_IF_ERROR(ParseInt(&v));
      out->push_back(v);
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume(')')) return Status::Ok();
      return Bad("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

// Validates the preamble at the start of `prefix` and returns the offset of the data
// (the end of the header). Needs only the first 12 bytes (10 for version 1.0).
StatusOr<int64_t> NpyHeaderEnd(std::string_view prefix, const std::string& source) {
  if (prefix.empty()) {
    return Error(StatusCode::kDataLoss, source, "is empty; expected a .npy file");
  }
  std::string_view head = prefix.substr(0, kMagic.size());
  if (head != kMagic.substr(0, head.size())) {
    return Error(StatusCode::kInvalidArgument, source,
                 "not a .npy file (it does not start with the bytes \"\\x93NUMPY\")");
  }
  if (prefix.size() < kPreambleV1) {
    return Error(StatusCode::kDataLoss, source,
                 "truncated: " + std::to_string(prefix.size()) +
                     " bytes, shorter than the .npy preamble; the file was cut short");
  }
  const auto major = static_cast<uint8_t>(prefix[6]);
  const auto minor = static_cast<uint8_t>(prefix[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return Error(StatusCode::kUnimplemented, source,
                 "unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(minor) + "; qtune reads versions 1.0, 2.0 and 3.0");
  }
  auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<uint8_t>(prefix[i])); };
  uint64_t header_len = 0;
  size_t preamble = kPreambleV1;
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
  } else {
    if (prefix.size() < kPreambleV2) {
      return Error(StatusCode::kDataLoss, source, "truncated inside the .npy preamble");
    }
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    preamble = kPreambleV2;
  }
  if (header_len > static_cast<uint64_t>(kMaxNpyHeaderBytes)) {
    return Error(StatusCode::kInvalidArgument, source,
                 "the .npy header claims " + std::to_string(header_len) + " bytes, more than the " +
                     std::to_string(kMaxNpyHeaderBytes) + "-byte limit; the file is corrupt");
  }
  return static_cast<int64_t>(preamble + header_len);
}

// Tensors of kBool must hold 0 or 1; numpy may store any non-zero byte as true.
void NormalizeBool(Tensor& tensor) {
  if (tensor.dtype() != DataType::kBool) return;
  auto* p = static_cast<uint8_t*>(tensor.raw_data());
  for (int64_t i = 0; i < tensor.num_elements(); ++i) p[i] = p[i] != 0 ? 1 : 0;
}

Status SizeMismatch(const std::string& source, const NpyHeader& header, int64_t available) {
  if (available < header.data_bytes) {
    return Error(StatusCode::kDataLoss, source,
                 "the header declares " + std::string(DataTypeName(header.dtype)) + "[" +
                     SizesToString(header.sizes) + "] (" + std::to_string(header.data_bytes) +
                     " bytes) but only " + std::to_string(available) +
                     " bytes of data follow; the file was cut short");
  }
  return Error(StatusCode::kDataLoss, source,
               std::to_string(available - header.data_bytes) +
                   " unexpected bytes follow the array data; the file is corrupt");
}

}  // namespace

StatusOr<NpyHeader> ParseNpyHeader(std::string_view prefix, const std::string& source_name) {
  ASSIGN_OR_RETURN(int64_t header_end, NpyHeaderEnd(prefix, source_name));
  if (static_cast<int64_t>(prefix.size()) < header_end) {
    return Error(StatusCode::kDataLoss, source_name,
                 "truncated inside the .npy header (needs " + std::to_string(header_end) +
                     " bytes, has " + std::to_string(prefix.size()) + ")");
  }
  const size_t preamble = static_cast<uint8_t>(prefix[6]) == 1 ? kPreambleV1 : kPreambleV2;
  std::string_view text = prefix.substr(preamble, header_end - preamble);

  std::string descr;
  bool fortran_order = false;
  NpyHeader header;
  HeaderParser parser(text, source_name);
  RETURN_IF_ERROR(parser.Parse(&descr, &fortran_order, &header.sizes));
  ASSIGN_OR_RETURN(header.dtype, ParseDescr(descr, source_name));
  if (fortran_order) {
    return Error(StatusCode::kUnimplemented, source_name,
                 "array is stored in Fortran (column-major) order; save it with "
                 "np.save(path, np.ascontiguousarray(a))");
  }
  for (int64_t size : header.sizes) {
    if (size < 0) {
      return Error(StatusCode::kInvalidArgument, source_name,
                   "shape (" + SizesToString(header.sizes) +
                       ") has a negative dimension; the file is corrupt");
    }
  }
  const int64_t n = NumElements(header.sizes);
  const auto elem = static_cast<int64_t>(DataTypeSize(header.dtype));
  if (n < 0 || n > kMaxTensorBytes / elem) {
    return Error(StatusCode::kResourceExhausted, source_name,
                 "shape (" + SizesToString(header.sizes) + ") of " +
                     std::string(DataTypeName(header.dtype)) + " is larger than the " +
                     std::to_string(kMaxTensorBytes >> 30) +
                     " GiB tensor limit; split the data into smaller files");
  }
  header.data_offset = header_end;
  header.data_bytes = n * elem;
  return header;
}

StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& source_name) {
  ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(bytes, source_name));
  const int64_t available = static_cast<int64_t>(bytes.size()) - header.data_offset;
  if (available != header.data_bytes) return SizeMismatch(source_name, header, available);
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(header.dtype, header.sizes));
  if (header.data_bytes > 0) {
    std::memcpy(tensor.raw_data(), bytes.data() + header.data_offset,
                static_cast<size_t>(header.data_bytes));
  }
  NormalizeBool(tensor);
  return tensor;
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::FILE* raw = std::fopen(path.c_str(), "rb");
  if (raw == nullptr) {
    const int err = errno;
    std::string message = "cannot open '" + path + "': " + std::strerror(err);
    return err == ENOENT ? NotFoundError(message) : InvalidArgumentError(message);
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(raw, &std::fclose);
  struct stat st;
  if (::fstat(::fileno(raw), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error(StatusCode::kInvalidArgument, path, "is not a regular file");
  }
  const auto file_size = static_cast<int64_t>(st.st_size);

  // Preamble first, then exactly the header it announces, then the data in place.
  std::string prefix(static_cast<size_t>(std::min<int64_t>(file_size, kPreambleV2)), '\0');
  if (std::fread(prefix.data(), 1, prefix.size(), raw) != prefix.size()) {
    return Error(StatusCode::kDataLoss, path, "read error in the .npy preamble");
  }
  ASSIGN_OR_RETURN(int64_t header_end, NpyHeaderEnd(prefix, path));
  if (header_end > file_size) {
    return Error(StatusCode::kDataLoss, path,
                 "truncated inside the .npy header (needs " + std::to_string(header_end) +
                     " bytes, the file has " + std::to_string(file_size) + ")");
  }
  const size_t have = prefix.size();
  prefix.resize(static_cast<size_t>(header_end));
  if (prefix.size() > have) {
    const size_t want = prefix.size() - have;
    if (std::fread(prefix.data() + have, 1, want, raw) != want) {
      return Error(StatusCode::kDataLoss, path, "read error in the .npy header");
    }
  } else if (std::fseek(raw, static_cast<long>(header_end), SEEK_SET) != 0) {
    return Error(StatusCode::kDataLoss, path, "cannot seek to the array data");
  }
  ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(prefix, path));
  const int64_t available = file_size - header.data_offset;
  if (available != header.data_bytes) return SizeMismatch(path, header, available);

  ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(header.dtype, header.sizes));
  const auto want = static_cast<size_t>(header.data_bytes);
  if (want > 0 && std::fread(tensor.raw_data(), 1, want, raw) != want) {
    return Error(StatusCode::kDataLoss, path,
                 "short read of the array data (did the file change while being read?)");
  }
  NormalizeBool(tensor);
  return tensor;
}

StatusOr<std::string> SerializeNpyHeader(const Tensor& tensor) {
  if (!tensor.is_valid()) return InvalidArgumentError("cannot write an invalid tensor as .npy");
  std::optional<std::string_view> descr;
  for (const DtypeSpelling& d : kDtypes) {
    if (d.dtype == tensor.dtype()) descr = d.written;
  }
  if (!descr) {
    return UnimplementedError("numpy has no dtype for " +
                              std::string(DataTypeName(tensor.dtype())) +
                              " tensors; cast to float32 (or float16) before saving as .npy");
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.rank(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(tensor.size(i));
  }
  if (tensor.rank() == 1) shape += ",";
  shape += ")";
  std::string dict =
      "{'descr': '" + std::string(*descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";

  // Pad with spaces and a final newline so the data starts on a 64-byte boundary.
  size_t preamble = kPreambleV1;
  if (dict.size() + 1 + kDataAlignment > 0xFFFF) preamble = kPreambleV2;
  const size_t unpadded = preamble + dict.size() + 1;
  const size_t padding = (kDataAlignment - unpadded % kDataAlignment) % kDataAlignment;
  const size_t header_len = dict.size() + padding + 1;

  std::string out(kMagic);
  out.push_back(static_cast<char>(preamble == kPreambleV1 ? 1 : 2));
  out.push_back(0);
  const size_t len_bytes = preamble == kPreambleV1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xFF));
  }
  out += dict;
  out.append(padding, ' ');
  out.push_back('\n');
  return out;
}

StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  ASSIGN_OR_RETURN(std::string out, SerializeNpyHeader(tensor));
  const auto data = tensor.bytes();
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

Status WriteNpy(const std::string& path, const Tensor& tensor) {
  auto bytes = SerializeNpy(tensor);
  if (!bytes.ok()) return bytes.status().WithContext("cannot write '" + path + "'");
  return WriteFileAtomic(path, *bytes);
}

}  // namespace qtune
