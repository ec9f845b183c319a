#include "kernels/dtype.h"

namespace cubench {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp64:
      return "fp64";
    case DType::fp32:
      return "fp32";
    case DType::tf32:
      return "tf32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
    case DType::fp8_e4m3:
      return "fp8";
  }
  return "unknown";
}

std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::fp64:
      return 8;
    case DType::fp32:
    case DType::tf32:
      return 4;
    case DType::fp16:
    case DType::bf16:
      return 2;
    case DType::fp8_e4m3:
      return 1;
  }
  return 0;
}

double dtype_tolerance(DType t) {
  switch (t) {
    case DType::fp64:
      return 1e-12;
    case DType::fp32:
      return 1e-5;
    case DType::tf32:
      return 1e-3;
    case DType::fp16:
    case DType::bf16:
    case DType::fp8_e4m3:
      return 1e-2;
  }
  return 0;
}

}  // namespace cubench
