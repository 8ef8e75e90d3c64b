// TensorProto <-> Tensor.
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/nibble_pack.h"
#include "core/shape.h"
#include "ir/external_data.h"
#include "ir/onnx_convert.h"

namespace qtune::ir {
namespace {

std::string TypeName(DataType dtype) { return std::string(DataTypeName(dtype)); }

// Which typed field ONNX uses for a data type, and how many entries one element takes.
enum class TypedField { kFloat, kInt32, kInt64, kDouble, kUint64, kNone };

TypedField FieldFor(DataType dtype, int* per_element) {
  *per_element = 1;
  switch (dtype) {
    case DataType::kFloat32:
      return TypedField::kFloat;
    case DataType::kComplex64:
      *per_element = 2;
      return TypedField::kFloat;
    case DataType::kFloat64:
      return TypedField::kDouble;
    case DataType::kComplex128:
      *per_element = 2;
      return TypedField::kDouble;
    case DataType::kInt64:
      return TypedField::kInt64;
    case DataType::kUint32:
    case DataType::kUint64:
      return TypedField::kUint64;
    case DataType::kInt32:
    case DataType::kInt16:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kUint8:
    case DataType::kBool:
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
      return TypedField::kInt32;
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
      return TypedField::kInt32;  // one packed byte (two elements) per entry
    default:
      return TypedField::kNone;
  }
}

const char* FieldName(TypedField field) {
  switch (field) {
    case TypedField::kFloat:
      return "float_data";
    case TypedField::kInt32:
      return "int32_data";
    case TypedField::kInt64:
      return "int64_data";
    case TypedField::kDouble:
      return "double_data";
    case TypedField::kUint64:
      return "uint64_data";
    case TypedField::kNone:
      break;
  }
  return "typed data";
}

int64_t FieldSize(const onnx::TensorProto& p, TypedField field) {
  switch (field) {
    case TypedField::kFloat:
      return p.float_data_size();
    case TypedField::kInt32:
      return p.int32_data_size();
    case TypedField::kInt64:
      return p.int64_data_size();
    case TypedField::kDouble:
      return p.double_data_size();
    case TypedField::kUint64:
      return p.uint64_data_size();
    case TypedField::kNone:
      break;
  }
  return 0;
}

// Narrowing copy: each source entry becomes one element of type T (bit patterns for the
// 16- and 8-bit float types, 0/1 for bool).
template <typename T, typename Source>
void CopyNarrowing(const Source& source, Tensor& tensor) {
  T* out = static_cast<T*>(tensor.raw_data());
  int64_t i = 0;
  for (auto v : source) out[i++] = static_cast<T>(v);
}

template <typename Source>
void CopyExact(const Source& source, Tensor& tensor) {
  if (source.empty()) return;
  std::memcpy(tensor.raw_data(), source.data(), source.size() * sizeof(source.Get(0)));
}

void CopyTyped(const onnx::TensorProto& p, TypedField field, Tensor& tensor) {
  switch (field) {
    case TypedField::kFloat:
      CopyExact(p.float_data(), tensor);  // float32 and complex64 (pairs)
      return;
    case TypedField::kDouble:
      CopyExact(p.double_data(), tensor);  // float64 and complex128 (pairs)
      return;
    case TypedField::kInt64:
      CopyExact(p.int64_data(), tensor);
      return;
    case TypedField::kUint64:
      if (tensor.dtype() == DataType::kUint32) {
        CopyNarrowing<uint32_t>(p.uint64_data(), tensor);
      } else {
        CopyExact(p.uint64_data(), tensor);
      }
      return;
    case TypedField::kInt32:
      switch (DataTypeSize(tensor.dtype())) {
        case 4:
          CopyExact(p.int32_data(), tensor);
          return;
        case 2:
          CopyNarrowing<uint16_t>(p.int32_data(), tensor);
          return;
        case 1:
          if (tensor.dtype() == DataType::kBool) {
            uint8_t* out = static_cast<uint8_t*>(tensor.raw_data());
            int64_t i = 0;
            for (int32_t v : p.int32_data()) out[i++] = v != 0 ? 1 : 0;
          } else {
            CopyNarrowing<uint8_t>(p.int32_data(), tensor);
          }
          return;
      }
      return;
    case TypedField::kNone:
      return;
  }
}

}  // namespace

TensorReader::TensorReader(std::string external_data_dir, int64_t max_total_bytes)
    : external_data_dir_(std::move(external_data_dir)), max_total_bytes_(max_total_bytes) {}

Status TensorReader::Reserve(int64_t bytes, const std::string& what) {
  if (bytes > max_total_bytes_ - used_bytes_) {
    return ResourceExhaustedError(
        what + " needs " + std::to_string(bytes) +
        " bytes, which would take the model's tensors to " + "more than the limit of " +
        std::to_string(max_total_bytes_) +
        " bytes (LoadOptions::max_total_tensor_bytes); the file is corrupt or the limit too low");
  }
  used_bytes_ += bytes;
  return Status::Ok();
}

StatusOr<Tensor> TensorReader::Read(const onnx::TensorProto& p, const std::string& what) {
  const int32_t onnx_type = p.data_type();
  if (!IsKnownDataType(onnx_type)) {
    return InvalidArgumentError(what + " has unknown data type " + std::to_string(onnx_type) +
                                " (qtune knows 1.." + std::to_string(kMaxKnownDataType) + ")");
  }
  const DataType dtype = static_cast<DataType>(onnx_type);
  std::vector<int64_t> sizes(p.dims().begin(), p.dims().end());
  for (int64_t d : sizes) {
    if (d < 0) {
      return InvalidArgumentError(what + " has a negative dimension: dims " + SizesToString(sizes));
    }
  }
  const int64_t n = NumElements(sizes);
  if (n < 0) {
    return InvalidArgumentError(what + " declares dims " + SizesToString(sizes) +
                                " whose element count overflows int64");
  }
  if (!IsStorableDataType(dtype)) {
    return UnimplementedError(what + " has type " + TypeName(dtype) +
                              ", which qtune tensors cannot hold yet");
  }
  if (p.has_segment()) return UnimplementedError(what + " is a segment of a larger tensor");
  const int64_t elem = static_cast<int64_t>(DataTypeSize(dtype));
  if (n > std::numeric_limits<int64_t>::max() / elem) {
    return InvalidArgumentError(what + " declares dims " + SizesToString(sizes) +
                                " whose byte size overflows int64");
  }
  const int64_t bytes = n * elem;
  RETURN_IF_ERROR(Reserve(bytes, what));
  // What the file holds: the 4-bit types two per byte, everything else as in memory.
  const bool packed = IsPackedInFiles(dtype);
  const int64_t file_bytes = PackedByteSize(dtype, n);

  const bool external = p.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
  int per_element = 1;
  const TypedField field = FieldFor(dtype, &per_element);
  // Check that the data present matches the declared size before allocating.
  if (!external && p.has_raw_data()) {
    if (static_cast<int64_t>(p.raw_data().size()) != file_bytes) {
      return InvalidArgumentError(what + " has " + std::to_string(p.raw_data().size()) +
                                  " bytes of raw_data but " + TypeName(dtype) + "[" +
                                  SizesToString(sizes) + "] needs " + std::to_string(file_bytes) +
                                  (packed ? " (two elements per byte)" : ""));
    }
  } else if (!external) {
    const int64_t have = FieldSize(p, field);
    const int64_t want = packed ? file_bytes : n * per_element;
    if (have != want) {
      if (have == 0) {
        return InvalidArgumentError(what + " (" + TypeName(dtype) + "[" + SizesToString(sizes) +
                                    "]) has no data: neither raw_data nor " + FieldName(field) +
                                    " is set");
      }
      return InvalidArgumentError(what + " holds " + std::to_string(have) + " values in " +
                                  FieldName(field) + " but " + TypeName(dtype) + "[" +
                                  SizesToString(sizes) + "] needs " + std::to_string(want) +
                                  (packed ? " (two elements per entry)" : ""));
    }
  }

  auto allocated = Tensor::Allocate(dtype, sizes);
  if (!allocated.ok()) return allocated.status().WithContext(what);
  Tensor tensor = std::move(allocated).value();
  if (packed) {
    std::vector<uint8_t> file(static_cast<size_t>(file_bytes));
    if (external) {
      RETURN_IF_ERROR(ReadExternal(p, what, std::as_writable_bytes(std::span(file))));
    } else if (p.has_raw_data()) {
      if (file_bytes > 0) std::memcpy(file.data(), p.raw_data().data(), file.size());
    } else {
      for (size_t k = 0; k < file.size(); ++k) file[k] = static_cast<uint8_t>(p.int32_data(k));
    }
    UnpackNibbles(dtype, file, {static_cast<uint8_t*>(tensor.raw_data()), static_cast<size_t>(n)});
  } else if (external) {
    RETURN_IF_ERROR(
        ReadExternal(p, what, {static_cast<std::byte*>(tensor.raw_data()), tensor.byte_size()}));
  } else if (p.has_raw_data()) {
    if (bytes > 0) std::memcpy(tensor.raw_data(), p.raw_data().data(), static_cast<size_t>(bytes));
  } else {
    CopyTyped(p, field, tensor);
  }
  return tensor;
}

Status TensorReader::ReadExternal(const onnx::TensorProto& p, const std::string& what,
                                  std::span<std::byte> out) {
  if (external_data_dir_.empty()) {
    return FailedPreconditionError(what +
                                   " keeps its data in an external file, but no folder to read "
                                   "it from was given (load the model from a file)");
  }
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& entry : p.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      auto parsed = ParseExternalDataNumber("offset", entry.value());
      if (!parsed.ok()) return parsed.status().WithContext(what);
      offset = *parsed;
    } else if (entry.key() == "length") {
      auto parsed = ParseExternalDataNumber("length", entry.value());
      if (!parsed.ok()) return parsed.status().WithContext(what);
      length = *parsed;
    }
  }
  if (location.empty()) {
    return InvalidArgumentError(what + " has data_location EXTERNAL but no 'location' entry");
  }
  auto path = ResolveExternalDataPath(external_data_dir_, location);
  if (!path.ok()) return path.status().WithContext(what);
  auto file_size = ExternalFileSize(*path);
  if (!file_size.ok()) return file_size.status().WithContext(what);
  const int64_t bytes = static_cast<int64_t>(out.size());
  if (offset > *file_size) {
    return OutOfRangeError(what + ": external data offset " + std::to_string(offset) +
                           " is past the end of '" + location + "' (" + std::to_string(*file_size) +
                           " bytes)");
  }
  if (length < 0) length = *file_size - offset;
  if (length != bytes) {
    return InvalidArgumentError(what + ": external data length " + std::to_string(length) +
                                " does not match the " + std::to_string(bytes) +
                                " bytes the tensor's type and dims need");
  }
  if (length > *file_size - offset) {
    return OutOfRangeError(what + ": external data [" + std::to_string(offset) + ", +" +
                           std::to_string(length) + ") runs past the end of '" + location + "' (" +
                           std::to_string(*file_size) + " bytes)");
  }
  Status read = ReadFileRange(*path, offset, out);
  return read.WithContext(what);
}

void TensorToProto(const Tensor& tensor, onnx::TensorProto* proto) {
  QTUNE_CHECK(tensor.is_valid());
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto->clear_dims();
  for (int64_t s : tensor.sizes()) proto->add_dims(s);
  AppendFileBytes(tensor, proto->mutable_raw_data());
}

void AppendFileBytes(const Tensor& tensor, std::string* out) {
  if (!IsPackedInFiles(tensor.dtype())) {
    out->append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
    return;
  }
  const size_t start = out->size();
  out->resize(start + static_cast<size_t>(PackedByteSize(tensor.dtype(), tensor.num_elements())));
  PackNibbles({static_cast<const uint8_t*>(tensor.raw_data()), tensor.byte_size()},
              {reinterpret_cast<uint8_t*>(out->data()) + start, out->size() - start});
}

}  // namespace qtune::ir
