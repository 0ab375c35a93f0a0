#!/usr/bin/env python3
"""Independent reference implementation of evoc's movable objects, in
PyTorch with float64 and automatic differentiation: the stdlib's
`mass_spring_objects` (2D) and `mass_spring3_objects` (3D) as
docs/language.md ("The world", "Scenes", "Objects") writes them, in ELDiR's
world (docs/evolution.md, "ELDiR simulation step"), with a scene of static
boxes:

- Each step, from the states at its start (point positions x and velocities
  v, object centres c and velocities u): the controller and the springs'
  impulses (ELDiR's MLP and spring law), then for every (point, object) pair
  the impulse j the point gets from the object, then the points' update as
  in `mass_spring_friction`, then the objects'.
- Pair impulse: d = x - c, h the object's half extents, g_k = h_k - |d_k|;
  the point is inside when every g_k > 0 (else j = 0). Exit axis: 2D x when
  g_x < g_y, else y; 3D x when g_x < g_y and g_x < g_z, else y when
  g_y < g_z, else z. n = that axis' unit vector times (+1 if d_k > 0 else
  -1), depth = min_k g_k. w = v - u, w_n = w . n, j_n = dt depth
  max(20000 - 100000 w_n, 0) (a penalty spring with a dashpot growing with
  the depth, after Hunt and Crossley), w_t = w - w_n n, j_t = -(min(mu j_n,
  |w_t|) / |w_t|) w_t (0 when |w_t| = 0), j = j_n n + j_t. The point adds j
  to its velocity change (unit mass), the object -j. (`--normal linear`:
  the first text's j_n = dt max(20000 depth - 100 w_n, 0) instead.)
- Points: v1 = exp(-dt damping) v + dt gravity e_up + (springs + pairs),
  then the friction contact with the ground and the scene at x1 = x + dt v1
  (scene_reference.py's contact surface, ELDiR's friction rule).
- Objects: v1 = exp(-dt damping) u + dt gravity e_up + (sum of -j) / mass;
  the bottom face's centre b = c - h_up e_up meets the ground and the scene
  exactly as a point at b with velocity v1 does, and c' = b' + h_up e_up.
- Initial state: the body lifted as in a scene (objects do not move it);
  each object at its box's centre, at rest.
- Loss: -mean(point.x[T].x - point.x[0].x) - mean(object.x[T].x -
  object.x[0].x) - 0.5 mean(object.x[T].up - object.x[0].up), `up` the last
  axis (y in 2D, z in 3D): objects2d.evo's and objects3d.evo's `carry`.

Written from those docs/ sections only, not from evoc's
sources. A test-data generator: nothing in the build or CI needs Python.

    objects_reference.py sim --dim {2,3} --world W.json --robots R.json \\
        --params P.json --steps T --out OUT.json [--grad-digits 10] [--perturb E]

W.json: {"ground": g, "boxes": [[x0, y0, (z0,) x1, y1, (z1)], ...],
"objects": [{"box": [x0, y0, (z0,) x1, y1, (z1)], "mass": M}, ...]} (mass
optional: the box's volume in voxels of side 0.05), and optionally
"friction": mu (world.ground.friction, default 1.0). `sim` prints, per robot,
the loss, the point-steps inside an object by exit axis, the point contacts
(box sides, tops, bottoms, ground) and the object contacts (same kinds).

    objects_reference.py gen3 --seed S --spec CELLS:STIFFNESS ... --at X Y \\
        --out-robots R.json --out-params P.json

mass_spring3_reference.py's random cube-cell bodies and parameters, each body
moved so that its lowest x and y corner is at (X, Y) (its height kept).
2D robots: eldir_reference.py gen (lattices start at x = 0.025).

    objects_reference.py pick --take R.json P.json I[,J...] [--take ...] \\
        --out-robots R.json --out-params P.json

the robots I, J, ... (from 0) of R.json with their parameters from P.json,
in the order given: a set of well-conditioned robots from larger random sets.

    objects_reference.py check --expected E.json --got G.json
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eldir_reference as ref2  # noqa: E402  (controller, springs)
import reference_common as common  # noqa: E402  (friction, command line, sim, gen, check)
import terrain_reference as tref  # noqa: E402  (friction contact rule, sim's options)
import scene_reference as sref  # noqa: E402  (contact surface, initial lift)
import mass_spring3_reference as ref3  # noqa: E402  (3D random bodies)

DT = tref.DT
DAMPING = tref.DAMPING
GRAVITY = tref.GRAVITY
MU = tref.MU
PENALTY = 20000.0
DASHPOT = 100000.0          # Hunt-Crossley: the dashpot is DASHPOT * depth
LINEAR_DASHPOT = 100.0      # --normal linear: a constant dashpot
NORMAL = "hunt-crossley"
VOXEL = 0.05


def read_world(path, dim):
    w = json.load(open(path))
    g = float(w["ground"])
    boxes = []
    for b in w.get("boxes", []):
        lo, hi = b[:dim], b[dim:]
        assert len(b) == 2 * dim and all(l < h for l, h in zip(lo, hi)), b
        boxes.append({"lo": lo, "hi": hi, "floating": lo[dim - 1] > g})
    objects = []
    for i, o in enumerate(w.get("objects", [])):
        b = o["box"]
        lo, hi = b[:dim], b[dim:]
        assert len(b) == 2 * dim and all(l < h for l, h in zip(lo, hi)), b
        mass = o.get("mass")
        if mass is None:
            mass = math.prod(h - l for l, h in zip(lo, hi)) / VOXEL ** dim
        centre = [0.5 * (l + h) for l, h in zip(lo, hi)]
        half = [0.5 * (h - l) for l, h in zip(lo, hi)]
        # starts on or above the ground and outside every scene box
        assert lo[dim - 1] >= g, "object %d starts in the ground" % i
        for bx in boxes:
            assert not all(l < bh and h > bl for l, h, bl, bh in zip(lo, hi, bx["lo"], bx["hi"])), \
                "object %d starts in a scene box" % i
        objects.append({"centre": centre, "half": half, "mass": float(mass)})
    return g, boxes, objects


def pair_impulses(x, v, c, u, half, dim, counts):
    """The impulses j (N x K x D) the points get from the objects."""
    import torch
    d = x.unsqueeze(1) - c.unsqueeze(0)              # N x K x D
    gk = half.unsqueeze(0) - torch.abs(d)            # depth on each axis
    gd = gk.detach()
    inside = (gd > 0).all(dim=2)                     # N x K
    if dim == 2:
        axis = torch.where(gd[..., 0] < gd[..., 1], 0, 1)
    else:
        axis = torch.where((gd[..., 0] < gd[..., 1]) & (gd[..., 0] < gd[..., 2]), 0,
                           torch.where(gd[..., 1] < gd[..., 2], 1, 2))
    onehot = torch.nn.functional.one_hot(axis, dim).to(torch.float64)
    dax = (d.detach() * onehot).sum(dim=2)
    sign = torch.where(dax > 0, 1.0, -1.0)
    n = onehot * sign.unsqueeze(2)
    depth = (gk * onehot).sum(dim=2)                 # = min_k g_k (the exit axis')
    w = v.unsqueeze(1) - u.unsqueeze(0)
    wn = (w * n).sum(dim=2)
    if NORMAL == "linear":
        jn = DT * torch.clamp(PENALTY * depth - LINEAR_DASHPOT * wn, min=0.0)
    else:
        jn = DT * depth * torch.clamp(PENALTY - DASHPOT * wn, min=0.0)
    wt = w - wn.unsqueeze(2) * n
    direction, sp = common.unit_and_norm(wt)
    jt = -direction * torch.minimum(MU * jn, sp).unsqueeze(2)
    j = jn.unsqueeze(2) * n + jt
    for o in range(c.shape[0]):
        for k in range(dim):
            counts["pairs"][o]["xyz"[k]] += int((inside[:, o] & (axis[:, o] == k)).sum())
    return torch.where(inside.unsqueeze(2), j, torch.zeros_like(j))


def friction_contact(x, v1, g, boxes, dim, counts, prefix):
    """mass_spring_friction's contact at x1 = x + dt v1 (scene_reference.py's
    contact surface); counts the hits by the kind of surface met."""
    x1 = x + DT * v1
    s = sref.Surface(x1, g, boxes, dim)
    x_new, v_new, hit = tref.contact_update("friction", x, v1, x1, s.in_contact(), s.gap,
                                            s.speed, s.nrm, s.push_out)
    for kind, name in ((0, "side"), (1, "top"), (2, "bottom")):
        counts[prefix + name] += int((hit & s.any & (s.kind == kind)).sum())
    counts[prefix + "ground"] += int((hit & ~s.any).sum())
    return x_new, v_new


def rollout_loss(robot, params, steps, g, boxes, objects, dim, counts):
    import torch
    f64 = torch.float64
    pts, a, b, rest, stiff, actu = ref2.robot_tensors(robot)
    n = pts.shape[0]
    up = torch.zeros(dim, dtype=f64)
    up[dim - 1] = 1.0
    lift = sref.initial_lift(pts.tolist(), g, boxes, dim)
    x = pts + lift * up
    v = torch.zeros_like(x)
    x0 = x
    c = torch.tensor([o["centre"] for o in objects], dtype=f64).reshape(-1, dim)
    half = torch.tensor([o["half"] for o in objects], dtype=f64).reshape(-1, dim)
    mass = torch.tensor([o["mass"] for o in objects], dtype=f64)
    u = torch.zeros_like(c)
    c0 = c
    if len(objects):  # the docs ask for objects clear of the body's start
        start = (half.unsqueeze(0) - torch.abs(x.unsqueeze(1) - c.unsqueeze(0)) > 0).all(dim=2)
        if bool(start.any()):
            print("warning: %d points start inside objects" % int(start.sum()), file=sys.stderr)
    hup = half[:, dim - 1:dim] * up                  # h_up e_up per object
    springs = ref2.controlled_springs(params, a, b, rest, stiff, actu)
    decay = math.exp(-DT * DAMPING)
    grav = DT * GRAVITY * up

    for t in range(1, steps):
        dv = springs(x, v, t)
        if len(objects):
            j = pair_impulses(x, v, c, u, half, dim, counts)
            dv = dv + j.sum(dim=1)
            du = -j.sum(dim=0)
        v1 = decay * v + grav + dv
        x_new, v_new = friction_contact(x, v1, g, boxes, dim, counts, "")
        if len(objects):
            u1 = decay * u + grav + du / mass.unsqueeze(1)
            bot, u = friction_contact(c - hup, u1, g, boxes, dim, counts, "object_")
            c = bot + hup
        x, v = x_new, v_new

    loss = -(x[:, 0] - x0[:, 0]).sum() / n
    if len(objects):
        k = c.shape[0]
        loss = loss - (c[:, 0] - c0[:, 0]).sum() / k \
            - 0.5 * (c[:, dim - 1] - c0[:, dim - 1]).sum() / k
    return loss, c.detach()


def new_counts(dim, n_objects):
    """Point-steps inside each object by exit axis; point and object contacts
    with box sides, tops, bottoms and the ground."""
    counts = {"pairs": [{"xyz"[k]: 0 for k in range(dim)} for _ in range(n_objects)]}
    for prefix in ("", "object_"):
        counts.update({prefix + s: 0 for s in ("side", "top", "bottom", "ground")})
    return counts


def moved_robot(rng, spec, at):
    """`gen3`'s random body for a spec CELLS:STIFFNESS (mass_spring3_reference.py's)
    moved so that its lowest x and y corner is at `at`, and its line."""
    cells, stiffness = spec.split(":")
    rob = ref3.random_robot(rng, int(cells), float(stiffness))
    mx = min(p[0] for p in rob["points"])
    my = min(p[1] for p in rob["points"])
    rob["points"] = [[p[0] - mx + at[0], p[1] - my + at[1], p[2]] for p in rob["points"]]
    ext = [(min(p[k] for p in rob["points"]), max(p[k] for p in rob["points"])) for k in range(3)]
    return rob, "%s: %d points, %d springs, %d actuated, extent %s" % (
        spec, len(rob["points"]), len(rob["springs"]), sum(1 for sp in rob["springs"] if sp[4] != 0),
        " ".join("[%.4f, %.4f]" % e for e in ext))


def main(argv):
    ap, sub = common.command_line(__doc__)
    s = sub.add_parser("sim")
    tref.add_sim_arguments(s)
    for act in s._actions:               # the objects' physics use the friction contact
        if act.dest == "model":
            act.required, act.choices, act.default = False, ("friction",), "friction"
    s.add_argument("--world", required=True)
    s.add_argument("--normal", choices=("hunt-crossley", "linear"), default="hunt-crossley",
                   help="the pairs' normal impulse: dt depth max(20000 - 100000 w_n, 0) "
                        "(default) or dt max(20000 depth - 100 w_n, 0)")
    gen = sub.add_parser("gen3")
    gen.add_argument("--seed", type=int, required=True)
    gen.add_argument("--spec", nargs="+", required=True, help="CELLS:STIFFNESS per robot")
    gen.add_argument("--at", nargs=2, type=float, required=True, metavar=("X", "Y"))
    gen.add_argument("--out-robots", required=True)
    gen.add_argument("--out-params", required=True)
    pick = sub.add_parser("pick")
    pick.add_argument("--take", nargs=3, action="append", required=True,
                      metavar=("ROBOTS", "PARAMS", "INDICES"))
    pick.add_argument("--out-robots", required=True)
    pick.add_argument("--out-params", required=True)
    common.add_check_arguments(sub.add_parser("check"), 1e-9, 1e-7)
    args = ap.parse_args(argv)

    if args.cmd == "sim":
        global MU, NORMAL
        NORMAL = args.normal
        g, boxes, objects = read_world(args.world, args.dim)
        # world.ground.friction: the ground's, the boxes' and the pairs' mu
        tref.MU = MU = float(json.load(open(args.world)).get("friction", 1.0))

        def loss_of(rob, leaves, i):
            counts = new_counts(args.dim, len(objects))
            loss, c = rollout_loss(rob, leaves, args.steps, g, boxes, objects, args.dim, counts)
            print("robot %d: contacts %s" % (i, counts))
            print("robot %d: object centres at T: %s" %
                  (i, [["%.4f" % e for e in row] for row in c.tolist()]))
            return loss
        common.run_sim(args, args.dim, loss_of)
        return 0
    if args.cmd == "gen3":
        common.run_gen(args, lambda rng, spec: moved_robot(rng, spec, args.at), ref3.random_params)
        return 0
    if args.cmd == "pick":
        robots, params = [], []
        for rpath, ppath, idx in args.take:
            rs, ps = json.load(open(rpath))["robots"], json.load(open(ppath))["params"]
            for i in (int(k) for k in idx.split(",")):
                robots.append(rs[i])
                params.append(ps[i])
        common.write_robots_and_params(args.out_robots, args.out_params, robots, params)
        return 0
    return common.check(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
