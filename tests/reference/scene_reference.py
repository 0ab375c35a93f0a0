#!/usr/bin/env python3
"""Independent reference implementation of evoc's scenes (static boxes), in
PyTorch with float64 and automatic differentiation: ELDiR's world and laws
(docs/evolution.md, "ELDiR simulation step") with both contact models, on flat ground
with the boxes of a scene, as docs/language.md ("The world", "Scenes")
writes the semantics:

- A box is lo[k] < hi[k] on every axis (the last one up); its inside (strictly
  between its faces) is solid, and so is everything below the ground.
- Its contact faces, in the order x0, x1, y0, y1 (, z0, z1): face lo[k] has
  outward normal -e_k and signed distance lo[k] - p[k], face hi[k] normal +e_k
  and distance p[k] - hi[k]; the bottom face counts only when the box floats
  (its bottom above the ground). Each face is the plane n . p = c.
- The contact surface at a position x: if x is inside boxes, the contact face
  of those boxes with the largest signed distance of x (ties: the earlier
  box, then the earlier face); otherwise the ground (normal e_up, gap
  p_up - g, speed v_up).
- in_contact(x) = x below the ground or inside a box; contact_gap(p, x) =
  n . p - c on a box face; contact_speed(v, x) = n . v; push_out(q, x) =
  q - min(0, n . q - c) n on a box face, then q_up = max(q_up, g).
- noslip: hit = in_contact(x1) and contact_speed(v1, x1) < -1e-4; then
  x' = x + toi v1 with toi = -contact_gap(x, x1) / contact_speed(v1, x1),
  v' = 0. friction: ELDiR's rule with that surface's normal and gap,
  x' = push_out(q2, x1) on a hit.
- Initial placement: lifted until no point is below the ground, then as
  little further as it takes until no point is inside a box.

Written from those docs/ sections only, not from evoc's
sources. A test-data generator: nothing in the build or CI needs Python.

    scene_reference.py sim --dim {2,3} --scene S.json --robots R.json \\
        --params P.json --steps T --model {noslip,friction} --out OUT.json

S.json: {"ground": g, "boxes": [[x0, y0, (z0,) x1, y1, (z1)], ...]}. `sim`
prints, per robot, the loss and how many point-steps met a box side, a box
top, a box bottom and the ground. Random robots and parameters:
eldir_reference.py gen (2D lattices), mass_spring3_reference.py gen (3D).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_common as common  # noqa: E402  (command line, sim's loop, check)
import terrain_reference as tref  # noqa: E402  (the contact rules, rollout and sim's options)


def read_scene(path, dim):
    s = json.load(open(path))
    boxes = []
    for b in s["boxes"]:
        lo, hi = b[:dim], b[dim:]
        assert len(b) == 2 * dim and all(l < h for l, h in zip(lo, hi)), b
        boxes.append({"lo": lo, "hi": hi, "floating": lo[dim - 1] > s["ground"]})
    return float(s["ground"]), boxes


def faces(box, dim):
    """(axis, side, normal component, c): side 0 = the lo face, 1 = the hi face."""
    out = []
    for k in range(dim):
        for side in (0, 1):
            if side == 0 and k == dim - 1 and not box["floating"]:
                continue
            out.append((k, side, -1.0 if side == 0 else 1.0,
                        -box["lo"][k] if side == 0 else box["hi"][k]))
    return out


class Surface:
    """The contact surface chosen at positions x (one row per point)."""

    def __init__(self, x, g, boxes, dim):
        import torch
        n = x.shape[0]
        self.g, self.dim = g, dim
        xd = x.detach()
        self.any = torch.zeros(n, dtype=torch.bool)
        best = torch.zeros(n, dtype=torch.float64)
        self.normal = torch.zeros(n, dim, dtype=torch.float64)
        self.c = torch.zeros(n, dtype=torch.float64)
        self.kind = torch.zeros(n, dtype=torch.long)  # 0 side, 1 top, 2 bottom
        for box in boxes:
            inside = torch.ones(n, dtype=torch.bool)
            for k in range(dim):
                inside &= (xd[:, k] > box["lo"][k]) & (xd[:, k] < box["hi"][k])
            bd = bn = bc = bkind = None
            for k, side, sign, c in faces(box, dim):
                d = box["lo"][k] - xd[:, k] if side == 0 else xd[:, k] - box["hi"][k]
                nrm = torch.zeros(n, dim, dtype=torch.float64)
                nrm[:, k] = sign
                kind = 0 if k < dim - 1 else (1 if side == 1 else 2)
                if bd is None:
                    bd, bn = d, nrm
                    bc = torch.full((n,), c, dtype=torch.float64)
                    bkind = torch.full((n,), kind, dtype=torch.long)
                else:
                    better = d > bd
                    bd = torch.where(better, d, bd)
                    bn = torch.where(better.unsqueeze(1), nrm, bn)
                    bc = torch.where(better, torch.full_like(bc, c), bc)
                    bkind = torch.where(better, torch.full_like(bkind, kind), bkind)
            take = inside & (~self.any | (bd > best))
            best = torch.where(take, bd, best)
            self.normal = torch.where(take.unsqueeze(1), bn, self.normal)
            self.c = torch.where(take, bc, self.c)
            self.kind = torch.where(take, bkind, self.kind)
            self.any |= inside
        up = torch.zeros(n, dim, dtype=torch.float64)
        up[:, dim - 1] = 1.0
        self.nrm = torch.where(self.any.unsqueeze(1), self.normal, up)
        self.below = x.detach()[:, dim - 1] < g

    def in_contact(self):
        return self.below | self.any

    def gap(self, p):
        import torch
        return torch.where(self.any, (self.normal * p).sum(dim=1) - self.c, p[:, self.dim - 1] - self.g)

    def speed(self, v):
        import torch
        return torch.where(self.any, (self.normal * v).sum(dim=1), v[:, self.dim - 1])

    def push_out(self, q):
        import torch
        behind = torch.clamp((self.normal * q).sum(dim=1) - self.c, max=0.0)
        q = torch.where(self.any.unsqueeze(1), q - behind.unsqueeze(1) * self.normal, q)
        top = torch.clamp(q[:, self.dim - 1], min=self.g)
        return torch.cat([q[:, :self.dim - 1], top.unsqueeze(1)], dim=1)


def initial_lift(pts, g, boxes, dim):
    lift = max(0.0, max(g - p[dim - 1] for p in pts))
    moved = True
    while moved:
        moved = False
        for p in pts:
            for b in boxes:
                q = list(p)
                q[dim - 1] += lift
                if all(b["lo"][k] < q[k] < b["hi"][k] for k in range(dim)):
                    need = b["hi"][dim - 1] - p[dim - 1]
                    if need > lift:
                        lift, moved = need, True
    return lift


def rollout_loss(robot, params, steps, model, g, boxes, dim, counts):
    """The loss; counts[kind] += the hits on box sides, tops, bottoms and the ground."""
    def contact(x, v1, x1):
        s = Surface(x1, g, boxes, dim)
        x_new, v_new, hit = tref.contact_update(model, x, v1, x1, s.in_contact(), s.gap, s.speed,
                                                s.nrm, s.push_out)
        for kind, name in ((0, "side"), (1, "top"), (2, "bottom")):
            counts[name] += int((hit & s.any & (s.kind == kind)).sum())
        counts["ground"] += int((hit & ~s.any).sum())
        return x_new, v_new

    return tref.rollout(robot, params, steps, dim,
                        lambda pts: initial_lift(pts.tolist(), g, boxes, dim), contact)


def main(argv):
    ap, sub = common.command_line(__doc__)
    s = sub.add_parser("sim")
    tref.add_sim_arguments(s)
    s.add_argument("--scene", required=True)
    common.add_check_arguments(sub.add_parser("check"), 1e-9, 1e-7)
    args = ap.parse_args(argv)

    if args.cmd == "sim":
        g, boxes = read_scene(args.scene, args.dim)

        def loss_of(rob, leaves, i):
            counts = {"side": 0, "top": 0, "bottom": 0, "ground": 0}
            loss = rollout_loss(rob, leaves, args.steps, args.model, g, boxes, args.dim, counts)
            print("robot %d: contacts %s" % (i, counts))
            return loss
        common.run_sim(args, args.dim, loss_of)
        return 0
    return common.check(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
