#include "backend/cpu.h"

#include "backend/launch.h"

namespace thn {

namespace {

using KernelFn = void (*)(int64_t, int32_t, const int64_t*, void* const*, const int64_t*, const double*,
                          const int64_t*, int32_t, int64_t, int32_t, int32_t);

// A fusion's kernel in a loaded host module.
class CpuFusion : public CompiledFusion {
 public:
  CpuFusion(const BoundSymbol& f, Kernel k, std::shared_ptr<HostModule> m)
      : CompiledFusion(f, std::move(k), kCPU), module_(std::move(m)) {
    fn_ = reinterpret_cast<KernelFn>(module_->symbol(kernel().name));
  }

 private:
  bool launch(const KernelCall& c) const override {
    // wide = 1: host kernels index in 64 bits and do not read the flag.
    fn_(c.n, c.nd, c.sizes.data(), c.data.data(), c.strides.data(), c.fs.data(), c.is.data(), c.flat, c.rn, c.rnd, 1);
    return true;
  }

  std::shared_ptr<HostModule> module_;
  KernelFn fn_ = nullptr;
};

}  // namespace

std::string kernel_source(const Trace& t, Target target, bool prelude) {
  std::vector<Kernel> ks = lower_fusions(t);
  return ks.empty() ? std::string() : render_kernels(ks, target, prelude);
}

FusionKernels compile_cpu(const Trace& t, CompileMode mode, std::vector<std::shared_ptr<const CompileJob>>* started) {
  return compile_fusions(
      t, mode,
      [](const Kernel& k, bool* fresh) {
        static const std::string prelude = render_kernels({}, Target::Cpu);
        return host_module_job(render_kernels({k}, Target::Cpu, false), fresh, prelude);
      },
      [](const BoundSymbol& f, const Kernel& k, const CompileJob& job) -> std::shared_ptr<const FusionKernel> {
        return std::make_shared<CpuFusion>(f, k, std::static_pointer_cast<HostModule>(job.result()));
      },
      started);
}

}  // namespace thn
