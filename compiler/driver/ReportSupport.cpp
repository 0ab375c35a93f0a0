// The report's world and trajectory callback on top of a compiled experiment.
#include "driver/ReportSupport.h"

#include "evolve/TrainEvaluate.h"

namespace evoc::driver {

report::World reportWorld(const sema::CheckedProgram &p, const runtime::TrainOptions &train) {
  report::World w;
  w.dim = int(p.world.dim);
  w.upAxis = train.upAxis;
  w.groundY = train.groundHeight;
  w.terrain = train.terrain;
  w.steps = train.steps;
  w.dt = p.world.dt;
  return w;
}

report::TrajectoryFn reportTrajectory(const runtime::ModuleInfo &info,
                                      const codegen::Executable &exe, runtime::TrainOptions train) {
  return [&info, &exe, train](const runtime::Robot &robot, const nlohmann::json &params,
                              const std::vector<int64_t> &times) {
    return runtime::trajectory(info, exe, robot, evolve::paramsFromJson(params), train, "point.x",
                               times);
  };
}

} // namespace evoc::driver
