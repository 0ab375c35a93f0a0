// Session: check, lower, differentiate, optimise and compile one experiment.
#include "app/Session.h"

#include <chrono>
#include <iostream>

#include "app/Pipeline.h"
#include "core/Device.h"
#include "cuda/CudaDevice.h"
#include "support/Error.h"

namespace evoc::app {

Session::Session(const CommonOptions &opts, const std::string &backend, bool requireExperiment) {
  codegen::BackendKind kind;
  if (!codegen::parseBackend(backend, kind))
    throw Error("unknown back end '" + backend + "' (expected cpu, interp or cuda)");
  CommonOptions full = opts;
  full.check.requireExperiment = requireExperiment;
  program_ = loadChecked(full, sources_, diags_);
  if (!program_)
    return;
  PipelineOptions po;
  po.tape = opts.tape;
  po.bodyGradients = opts.bodyGradients;
  module_ = buildModule(*program_, sources_, diags_, po);
  diags_.flush(std::cerr);
  if (!module_)
    return;
  auto t0 = std::chrono::steady_clock::now();
  kind_ = kind;
  exe_ = codegen::compile(*module_, kind);
  compileSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Session::error(SourceRange at, std::string message) {
  diags_.error(at, std::move(message));
  diags_.flush(std::cerr);
}

std::shared_ptr<runtime::TrainDevice> Session::trainDevice(const runtime::ModuleInfo &info,
                                                           int threads) const {
  if (kind_ == codegen::BackendKind::Cuda) // compile() gave the CUDA back end's executable
    return cuda::cudaDevice(info, static_cast<const codegen::cuda::CudaExecutable &>(*exe_));
  return runtime::cpuDevice(info, *exe_, threads);
}

std::unique_ptr<codegen::Executable> Session::lanesExecutable(int lanes) const {
  if (kind_ != codegen::BackendKind::Cpu || !module_ || lanes < 2)
    return nullptr;
  codegen::CompileOptions co;
  co.lanes = lanes;
  try {
    return codegen::compile(*module_, kind_, co);
  } catch (const Error &) { // a kernel that cannot run in lanes: one episode per call
    return nullptr;
  }
}

runtime::TrainOptions Session::trainOptions() const {
  const sema::CheckedProgram &p = *program_;
  runtime::TrainOptions o;
  o.steps = p.world.steps;
  o.groundHeight = p.world.ground.height;
  o.terrain = p.world.ground.shape();
  o.upAxis = p.world.dim - 1; // gravity and the ground act along the last axis
  o.checkpointK = p.world.checkpoint.value_or(0);
  o.stateLimit = p.world.stateLimit;
  const sema::Learn &learn = p.hasTrain ? p.train.learn : p.evolve.learn;
  o.seed = p.hasTrain ? p.train.seed : p.evolve.seed;
  o.iterations = int(learn.iterations);
  o.batch = learn.batch;
  o.continuation.after = learn.episodes.continueAfter;
  o.continuation.resetEvery = learn.episodes.resetEvery;
  o.continuation.resetEveryMax = learn.episodes.resetEveryMax;
  o.continuation.growEvery = learn.episodes.growEvery;
  if (!p.commands.empty())
    o.commands = &p.commands;
  const sema::Optimizer &opt = learn.optimizer;
  o.optimizer.kind = opt.kind;
  auto arg = [&](const char *k, double dflt) {
    auto it = opt.args.find(k);
    return it == opt.args.end() ? dflt : it->second;
  };
  o.optimizer.step = arg("step", o.optimizer.step);
  o.optimizer.lr = arg("lr", o.optimizer.lr);
  o.optimizer.beta1 = arg("beta1", o.optimizer.beta1);
  o.optimizer.beta2 = arg("beta2", o.optimizer.beta2);
  o.optimizer.eps = arg("eps", o.optimizer.eps);
  return o;
}

} // namespace evoc::app
