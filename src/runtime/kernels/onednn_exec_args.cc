#include "runtime/kernels/onednn_exec_args.h"

#include "runtime/kernels/onednn_context.h"

namespace qtune::runtime::onednn {

dnnl::memory* ExecArgs::Find(int arg) {
  for (auto& [id, memory] : memories_) {
    if (id == arg) return &memory;
  }
  return nullptr;
}

void ExecArgs::Bind(int arg, const dnnl::memory::desc& desc, const void* data) {
  if (dnnl::memory* memory = Find(arg)) {
    if (memory->get_data_handle() != data) memory->set_data_handle(const_cast<void*>(data));
    return;
  }
  memories_.emplace_back(arg, WrapMemory(desc, data));
  c_args_stale_ = true;
}

void ExecArgs::Set(int arg, const dnnl::memory& memory) {
  if (dnnl::memory* existing = Find(arg)) {
    if (existing->get() == memory.get()) return;
    *existing = memory;
  } else {
    memories_.emplace_back(arg, memory);
  }
  c_args_stale_ = true;
}

void ExecArgs::Execute(const dnnl::primitive& primitive) {
  if (c_args_stale_) {
    c_args_.clear();
    for (const auto& [id, memory] : memories_) c_args_.push_back({id, memory.get()});
    c_args_stale_ = false;
  }
  dnnl::stream& stream = Stream();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive.get(), stream.get(),
                                                 static_cast<int>(c_args_.size()), c_args_.data()),
                          "could not execute a primitive");
  stream.wait();
}

}  // namespace qtune::runtime::onednn
