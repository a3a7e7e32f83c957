#include "trainer/engine/gradient_reducer.hpp"

#include "prediction/gradient_buckets.hpp"
#include "trainer/engine/step_clock.hpp"

#include <stdexcept>

namespace ddpscale {

BucketLayout plan_buckets(const std::vector<size_t>& parameter_bytes, const ReducerOptions& options) {
  return {assign_buckets(parameter_bytes, {options.first_bucket_mb, options.bucket_mb})};
}

DType comm_dtype(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat: return DType::f32;
    case torch::kDouble: return DType::f64;
    case torch::kHalf: return DType::f16;
    case torch::kBFloat16: return DType::bf16;
    case torch::kInt: return DType::i32;
    case torch::kLong: return DType::i64;  // BatchNorm's num_batches_tracked
    default: throw std::runtime_error(std::string("unsupported dtype for a collective: ") + c10::toString(t.scalar_type()));
  }
}

struct GradientReducer::Bucket {
  torch::Tensor flat;               // one contiguous buffer; the parameters' .grad are views into it
  torch::Tensor wire;               // bfloat16_allreduce: the bf16 copy that is reduced
  std::vector<size_t> parameters;
  std::vector<torch::Tensor> views;  // per parameter, its gradient's place in flat
  size_t pending = 0;               // parameters whose gradient has not arrived this backward
  std::unique_ptr<CommWork> work;
};

GradientReducer::GradientReducer(std::vector<torch::Tensor> parameters, std::vector<std::string> names,
                                 Communicator& comm, const ReducerOptions& options, StepClock* clock)
    : parameters_(std::move(parameters)), names_(std::move(names)), comm_(comm), options_(options), clock_(clock) {
  std::vector<size_t> bytes;
  for (const auto& p : parameters_) bytes.push_back(static_cast<size_t>(p.numel()) * p.element_size());
  layout_ = plan_buckets(bytes, options_);
  bucket_of_parameter_.assign(parameters_.size(), 0);
  ready_.assign(parameters_.size(), false);

  for (size_t b = 0; b < layout_.buckets.size(); ++b) {
    auto bucket = std::make_unique<Bucket>();
    bucket->parameters = layout_.buckets[b];
    int64_t total = 0;
    for (size_t p : bucket->parameters) total += parameters_[p].numel();
    const auto& first = parameters_[bucket->parameters.front()];
    bucket->flat = torch::zeros({total}, first.options().requires_grad(false));
    if (options_.bfloat16_allreduce) bucket->wire = torch::empty({total}, bucket->flat.options().dtype(torch::kBFloat16));
    int64_t offset = 0;
    for (size_t p : bucket->parameters) {
      auto& param = parameters_[p];
      if (param.scalar_type() != first.scalar_type() || param.device() != first.device())
        throw std::runtime_error("gradient reducer: parameters of one bucket must share dtype and device");
      bucket->views.push_back(bucket->flat.narrow(0, offset, param.numel()).view(param.sizes()));
      if (options_.gradients_stay_in_buckets) param.mutable_grad() = bucket->views.back();
      offset += param.numel();
      bucket_of_parameter_[p] = b;
    }
    buckets_.push_back(std::move(bucket));
  }
  // After a parameter's AccumulateGrad node its .grad (a view into the bucket, or autograd's
  // own tensor until the bucket gathers it) is final.
  ready_hooks_ = std::make_unique<GradientReadyHooks>(parameters_, [this](size_t p) { on_gradient_ready(p); });
}

GradientReducer::~GradientReducer() {
  for (auto& bucket : buckets_)
    if (bucket->work) bucket->work->wait();
}

void GradientReducer::broadcast_parameters() { broadcast(parameters_); }

void GradientReducer::broadcast(std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  for (auto& p : tensors) {
    // Parameters and buffers are contiguous leaves in every model we build; broadcast in place.
    if (!p.is_contiguous()) throw std::runtime_error("gradient reducer: non-contiguous parameter or buffer");
    if (p.numel() == 0) continue;
    comm_.broadcast(p.data_ptr(), static_cast<size_t>(p.numel()), comm_dtype(p), 0);
  }
  comm_.synchronize();
}

void GradientReducer::prepare_for_backward() {
  for (auto& bucket : buckets_) {
    if (options_.gradients_stay_in_buckets) {
      bucket->flat.zero_();
    } else {
      for (size_t p : bucket->parameters) parameters_[p].mutable_grad().reset();
    }
    bucket->pending = bucket->parameters.size();
    bucket->work.reset();
  }
  std::fill(ready_.begin(), ready_.end(), false);
  next_to_launch_ = 0;
  launched_ = 0;
}

void GradientReducer::on_gradient_ready(size_t parameter) {
  if (ready_[parameter]) return;  // a parameter used twice in forward fires once per use
  ready_[parameter] = true;
  if (ready_observer_) ready_observer_(parameter);  // before its bucket's launch adds any work
  Bucket& bucket = *buckets_[bucket_of_parameter_[parameter]];
  --bucket.pending;
  if (options_.overlap) launch_ready_buckets_in_order();
}

// Buckets go out strictly in index order on every rank, whatever order autograd finished
// them in, so the collectives of all ranks line up.
void GradientReducer::launch_ready_buckets_in_order() {
  while (next_to_launch_ < buckets_.size() && buckets_[next_to_launch_]->pending == 0) launch(next_to_launch_++);
}

// gradients_stay_in_buckets false: autograd's gradient tensors, copied into the bucket by
// one cat kernel; from then on .grad views the bucket, so the optimizer reads the averages.
void GradientReducer::gather_into_bucket(Bucket& bucket) {
  std::vector<torch::Tensor> gradients;
  gradients.reserve(bucket.parameters.size());
  for (size_t p : bucket.parameters) gradients.push_back(parameters_[p].grad().reshape({-1}));
  torch::cat_out(bucket.flat, gradients, 0);
  for (size_t i = 0; i < bucket.parameters.size(); ++i) parameters_[bucket.parameters[i]].mutable_grad() = bucket.views[i];
}

void GradientReducer::launch(size_t b) {
  Bucket& bucket = *buckets_[b];
  if (launched_ == 0 && clock_) clock_->mark_comm_start();
  if (!options_.gradients_stay_in_buckets) gather_into_bucket(bucket);
  // The cast runs on the compute stream, before the event the communicator's stream waits for.
  torch::Tensor& sent = bucket.wire.defined() ? bucket.wire.copy_(bucket.flat) : bucket.flat;
  bucket.work = comm_.allreduce_async(sent.data_ptr(), static_cast<size_t>(sent.numel()), comm_dtype(sent),
                                      ReduceOp::average);
  ++launched_;
  if (launched_ == buckets_.size() && clock_ && comm_.backend() == Backend::nccl) clock_->mark_comm_end();
}

void GradientReducer::finish_backward() {
  for (size_t p = 0; p < parameters_.size(); ++p)
    if (!ready_[p])
      throw std::runtime_error("parameter '" + names_[p] +
                               "' got no gradient in backward: it is not used by the loss. Every parameter of a "
                               "data-parallel model must take part in every step");
  launch_ready_buckets_in_order();
  for (auto& bucket : buckets_) {
    bucket->work->wait();  // orders the compute stream after the reduction (NCCL) or ends it (MPI)
    if (bucket->wire.defined()) bucket->flat.copy_(bucket->wire);
  }
  // On the host backend the last wait is the moment the reduction really ended.
  if (clock_ && comm_.backend() != Backend::nccl) clock_->mark_comm_end();
}

}  // namespace ddpscale
