// LatticeModel: LatticeBody's sampling, mutation and expression as a BodyModel.
#include "evolve/bodies/LatticeModel.h"

#include "support/Error.h"

namespace evoc::evolve {

LatticeModel::LatticeModel(LatticeSpec spec, LatticeMutation mutation)
    : body_(spec), mutation_(mutation) {
  const LatticeMutation reference = defaultMutation(body_.geometry());
  if (mutation_.cellRate < 0)
    mutation_.cellRate = reference.cellRate;
  if (mutation_.actuatorRate < 0)
    mutation_.actuatorRate = reference.actuatorRate;
}

const LatticeGenome &LatticeModel::genome(const Genome &g) {
  const auto *box = dynamic_cast<const LatticeGenomeBox *>(&g);
  EVOC_ASSERT(box, "a genome of another body model given to the lattice model");
  return box->g;
}

GenomePtr LatticeModel::sample(EvoRng &rng) const {
  return std::make_shared<LatticeGenomeBox>(body_.sample(rng));
}

Variation LatticeModel::vary(const Genome &parent, const std::vector<const Genome *> &,
                             EvoRng &rng) const {
  // ELDiR has no crossover of lattice masks (docs/evolution.md, "ELDiR
  // evolution"): donors are not used.
  LatticeMutationReport rep;
  Variation v;
  v.genome = std::make_shared<LatticeGenomeBox>(body_.mutate(genome(parent), mutation_, rng, &rep));
  v.ops.push_back("flip cell");
  if (rep.actuationFlipped)
    v.ops.push_back("flip actuator");
  v.attempts = rep.attempts;
  if (rep.maskGaveUp) {
    v.fallback = true;
    v.fallbackOp = "flip cell";
  }
  return v;
}

Phenotype LatticeModel::express(const Genome &g) const {
  Phenotype p;
  std::vector<int> nodes, edges;
  p.robot = body_.express(genome(g), &nodes, &edges);
  p.pointKeys.assign(nodes.begin(), nodes.end());
  p.springKeys.assign(edges.begin(), edges.end());
  if (p.robot.numPoints() == 0) { // repair never leaves an empty mask; a loaded genome may
    p.valid = false;
    p.reason = "the lattice mask is empty";
  }
  return p;
}

nlohmann::json LatticeModel::toJson(const Genome &g) const { return body_.toJson(genome(g)); }

GenomePtr LatticeModel::fromJson(const nlohmann::json &j) const {
  return std::make_shared<LatticeGenomeBox>(body_.fromJson(j));
}

nlohmann::json LatticeModel::fingerprint() const {
  const LatticeSpec &b = body_.spec();
  const LatticeMutation &m = mutation_;
  return {{"kind", "lattice"},
          {"rows", b.rows},
          {"cols", b.cols},
          {"edge", b.edge},
          {"stiffness", b.stiffness},
          {"actuation", b.actuation},
          {"base_y", b.baseY},
          {"fill_holes", b.fillHoles},
          {"largest_component", b.largestComponent},
          {"sample_cell_p", b.sampleCellP},
          {"sample_actuator_p", b.sampleActuatorP},
          {"mutation",
           {{"cell_rate", m.cellRate},
            {"until_changed", m.untilChanged},
            {"growth", m.growth},
            {"actuator_rate", m.actuatorRate},
            {"max_attempts", m.maxAttempts}}}};
}

} // namespace evoc::evolve
