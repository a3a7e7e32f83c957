// float <-> float16 / bfloat16 conversions for the MPI backend, which has no 16-bit
// float types of its own: 16-bit buffers are summed through a user-defined MPI_Op.
#pragma once
#include <cstdint>

namespace ddpscale {

float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);  // round to nearest even
float f16_to_float(uint16_t bits);
uint16_t float_to_f16(float value);   // round to nearest even, overflow to inf

}  // namespace ddpscale
