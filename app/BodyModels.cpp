// bodyModel(): a checked program's body as a runtime body model.
#include "app/BodyModels.h"

#include "evolve/bodies/CellBody.h"
#include "evolve/bodies/GrammarBody.h"
#include "evolve/bodies/LatticeModel.h"
#include "evolve/bodies/VoxelBody.h"
#include "support/Error.h"

namespace evoc::app {
namespace {

/// The lattice body of a checked `body lattice` with its `mutation` rules.
std::shared_ptr<const evolve::BodyModel> latticeModel(const sema::CheckedProgram &p) {
  if (p.body.cell != "triangle")
    throw Error("only lattices of the triangle cell can be evolved yet (the body uses '" +
                p.body.cell + "')");
  evolve::LatticeSpec body;
  body.rows = int(p.body.rows);
  body.cols = int(p.body.cols);
  body.edge = p.body.edge;
  body.stiffness = p.body.stiffness;
  body.actuation = p.body.actuation;
  body.baseY = p.world.ground.height;
  body.fillHoles = p.body.fillHoles;
  body.largestComponent = p.body.largestComponent;
  evolve::LatticeMutation mutation = evolve::kReferenceLatticeMutation;
  mutation.cellRate = p.latticeMutation.cellRate;
  mutation.untilChanged = p.latticeMutation.untilChanged;
  mutation.actuatorRate = p.latticeMutation.actuatorRate;
  return std::make_shared<evolve::LatticeModel>(body, mutation);
}

} // namespace

std::shared_ptr<const evolve::BodyModel> bodyModel(const sema::CheckedProgram &p) {
  if (p.hasBody && p.body.kind == ast::BodyKind::Lattice)
    return latticeModel(p);
  if (p.hasBody && p.grammarBody)
    return std::make_shared<evolve::GrammarBody>(*p.grammarBody, p.grammarMutation);
  if (p.hasBody && p.cellBody)
    return std::make_shared<evolve::CellBody>(*p.cellBody, p.world.ground.height);
  if (p.hasBody && p.voxelBody)
    return std::make_shared<evolve::VoxelBody>(*p.voxelBody, p.voxelMutation,
                                               p.world.ground.height);
  throw Error("this program has no body: declare `body lattice NAME { ... }`, "
              "`body grammar NAME { ... }`, `body voxel NAME { ... }` or "
              "`body cells NAME { ... }`");
}

} // namespace evoc::app
