// The arguments of one oneDNN primitive's execute(), kept between runs: a memory object
// per argument is created on the first run and only re-pointed at each later run's data
// (set_data_handle), and the C argument array is built once, so a warm run allocates
// nothing on qtune's side (oneDNN's execute() keeps a few small allocations of its own).
//
// Contract: each argument id is bound with the same memory desc at every run (the
// kernel's own, fixed when it was built). Not thread-safe: a kernel runs on one thread at
// a time (Session::Run serializes its runs).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

namespace qtune::runtime::onednn {

class ExecArgs {
 public:
  // Argument `arg` reads or writes `data`, laid out as `desc`.
  void Bind(int arg, const dnnl::memory::desc& desc, const void* data);
  // Argument `arg` is a memory the kernel owns (weights, bias, a converted source).
  void Set(int arg, const dnnl::memory& memory);
  // Runs `primitive` on the calling thread's stream with the arguments bound so far and
  // waits for it. Throws dnnl::error like primitive::execute.
  void Execute(const dnnl::primitive& primitive);

 private:
  dnnl::memory* Find(int arg);

  std::vector<std::pair<int, dnnl::memory>> memories_;
  std::vector<dnnl_exec_arg_t> c_args_;  // rebuilt when an argument's memory object changes
  bool c_args_stale_ = true;
};

}  // namespace qtune::runtime::onednn
