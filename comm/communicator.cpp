#include "communicator.hpp"

#include <stdexcept>

namespace ddpscale {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::i32: return 4;
    case DType::i64: return 8;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64})
    if (name == dtype_name(d)) return d;
  if (name == "fp32" || name == "float") return DType::f32;
  if (name == "fp64" || name == "double") return DType::f64;
  if (name == "fp16" || name == "half") return DType::f16;
  if (name == "bf16") return DType::bf16;
  throw std::invalid_argument("unknown dtype '" + name + "' (choose float32, float64, float16, bfloat16, int32, int64)");
}

const char* backend_name(Backend backend) { return backend == Backend::mpi ? "mpi" : "nccl"; }

}  // namespace ddpscale
