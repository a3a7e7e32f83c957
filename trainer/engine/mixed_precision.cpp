#include "trainer/engine/mixed_precision.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace ddpscale {
namespace {

// LibTorch 2.4 replaced the per-device autocast functions with ones taking the device type;
// the CPU build here is Debian's 1.13, the GPU build 2.x.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_on(c10::DeviceType type) { return at::autocast::is_autocast_enabled(type); }
void turn_autocast(c10::DeviceType type, bool on) { at::autocast::set_autocast_enabled(type, on); }
at::ScalarType autocast_type(c10::DeviceType type) { return at::autocast::get_autocast_dtype(type); }
void use_autocast_type(c10::DeviceType type, at::ScalarType dtype) { at::autocast::set_autocast_dtype(type, dtype); }
#else
bool is_cuda(c10::DeviceType type) { return type == c10::DeviceType::CUDA; }
bool autocast_on(c10::DeviceType type) {
  return is_cuda(type) ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void turn_autocast(c10::DeviceType type, bool on) {
  if (is_cuda(type))
    at::autocast::set_enabled(on);
  else
    at::autocast::set_cpu_enabled(on);
}
at::ScalarType autocast_type(c10::DeviceType type) {
  return is_cuda(type) ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void use_autocast_type(c10::DeviceType type, at::ScalarType dtype) {
  if (is_cuda(type))
    at::autocast::set_autocast_gpu_dtype(dtype);
  else
    at::autocast::set_autocast_cpu_dtype(dtype);
}
#endif

}  // namespace

AutocastScope::AutocastScope(bool enabled, const torch::Device& device)
    : enabled_(enabled), device_type_(device.type()) {
  if (!enabled_) return;
  previous_enabled_ = autocast_on(device_type_);
  previous_dtype_ = autocast_type(device_type_);
  turn_autocast(device_type_, true);
  use_autocast_type(device_type_, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  turn_autocast(device_type_, previous_enabled_);
  use_autocast_type(device_type_, previous_dtype_);
}

}  // namespace ddpscale
