"""evoc's loss and adjoint inside PyTorch and JAX: finite differences,
equality with simulate's gradients, an Adam loop, jax.grad."""

import numpy as np
import pytest

import evoc

STEPS = 30


@pytest.fixture(scope="module")
def setup(small):
    # Two bodies of one topology (the controllers' shapes must agree to batch).
    b = small.sample(1, seed=3)[0]
    bodies = [b, evoc.Body(b.points, b.springs, b.rest, b.stiffness * 1.2, b.actuation * 0.8)]
    ref = small.simulate(bodies, steps=STEPS)
    return small, bodies, ref


def test_torch_gradient_equals_simulate_and_fd(setup):
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    import evoc.torch as et

    exp, bodies, ref = setup
    params = et.init_params(exp, bodies)
    losses = et.rollout_loss(exp, bodies, params, steps=STEPS)
    assert losses.dtype == torch.float64 and losses.shape == (2,)
    assert np.array_equal(losses.detach().numpy(), ref.losses)
    w = torch.tensor([0.7, -1.3], dtype=torch.float64)
    (losses * w).sum().backward()
    for k, p in params.items():
        want = np.stack([0.7 * ref.grads[0][k], -1.3 * ref.grads[1][k]])
        assert np.array_equal(p.grad.numpy(), want), k

    # gradcheck-style (f64, central differences) on one small field, the
    # others held fixed: every element of it.
    name = min(params, key=lambda k: params[k].numel())
    fixed = {k: v.detach() for k, v in params.items() if k != name}

    def f(x):
        return et.rollout_loss(exp, bodies, {**fixed, name: x}, steps=STEPS)

    x = params[name].detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_torch_adam_lowers_the_loss(setup):
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    import evoc.torch as et

    exp, bodies, _ = setup
    params = et.init_params(exp, bodies[:1])
    opt = torch.optim.Adam(params.values(), lr=0.02)
    curve = []
    for _ in range(8):
        opt.zero_grad()
        loss = et.rollout_loss(exp, bodies[:1], params, steps=STEPS).sum()
        loss.backward()
        opt.step()
        curve.append(loss.item())
    final = et.rollout_loss(exp, bodies[:1], params, steps=STEPS).item()
    assert final < curve[0], curve + [final]


def test_jax_grad_equals_simulate(setup):
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install jax)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import evoc.jax as ej

    exp, bodies, ref = setup
    f = ej.rollout_loss(exp, bodies, steps=STEPS)
    params = ej.init_params(exp, bodies)
    assert np.array_equal(np.asarray(f(params)), ref.losses)
    w = jnp.array([0.7, -1.3])
    g = jax.grad(lambda p: (f(p) * w).sum())(params)
    for k in params:
        want = np.stack([0.7 * ref.grads[0][k], -1.3 * ref.grads[1][k]])
        assert np.array_equal(np.asarray(g[k]), want), k


def test_torch_gradient_of_initial_positions(setup):
    """d loss / d initial positions through the PyTorch function: equal to
    simulate's point_grads and to central differences (a body raised above
    the ground, so that the lift onto it is the identity)."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    import evoc.torch as et

    exp, bodies, _ = setup
    b = bodies[0]
    raised = evoc.Body(b.points + [0.0, 0.002], b.springs, b.rest, b.stiffness, b.actuation)
    params = {k: v.detach() for k, v in et.init_params(exp, [raised]).items()}
    ref = exp.simulate(raised, {k: v[0].numpy() for k, v in params.items()}, steps=STEPS, point_grads=True)
    pts = torch.from_numpy(raised.points[None].copy()).requires_grad_(True)
    loss = et.rollout_loss(exp, [raised], params, points=pts, steps=STEPS)
    assert loss.item() == ref.losses[0]
    loss.sum().backward()
    assert np.array_equal(pts.grad[0].numpy(), ref.point_grads[0])
    assert np.abs(ref.point_grads[0]).max() > 0

    def f(x):
        return et.rollout_loss(exp, [raised], params, points=x, steps=STEPS)

    x = pts.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_jax_gradient_of_initial_positions(setup):
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install jax)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import evoc.jax as ej

    exp, bodies, _ = setup
    b = bodies[0]
    raised = evoc.Body(b.points + [0.0, 0.002], b.springs, b.rest, b.stiffness, b.actuation)
    params = ej.init_params(exp, [raised])
    ref = exp.simulate(raised, {k: np.asarray(v[0]) for k, v in params.items()}, steps=STEPS, point_grads=True)
    f = ej.rollout_loss(exp, [raised], steps=STEPS, points=True)
    g = jax.grad(lambda x: f(params, x).sum())(jnp.asarray(raised.points[None]))
    assert np.array_equal(np.asarray(g[0]), ref.point_grads[0])


def test_torch_gradient_of_springs(setup):
    """d loss / d rest lengths, stiffness and actuation through the PyTorch
    function: equal to simulate's body_grads, gradcheck on the rest lengths
    and actuation, and an Adam loop over the rest lengths alone lowers the
    loss (the body learns, the controller fixed)."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    import evoc.torch as et

    exp, bodies, _ = setup
    params = {k: v.detach() for k, v in et.init_params(exp, bodies).items()}
    ref = exp.simulate(
        bodies, [{k: v[i].numpy() for k, v in params.items()} for i in range(2)], steps=STEPS, body_grads=True
    )
    springs = et.spring_tensors(bodies)
    losses = et.rollout_loss(exp, bodies, params, steps=STEPS, **springs)
    assert np.array_equal(losses.detach().numpy(), ref.losses)
    losses.sum().backward()
    for k, t in springs.items():
        want = np.stack([g["spring." + k] for g in ref.body_grads])
        assert np.array_equal(t.grad.numpy(), want), k
        assert np.abs(want).max() > 0, k

    for k in ("rest", "actuation"):
        x = springs[k].detach()[:1].clone().requires_grad_(True)

        def f(x, k=k):
            return et.rollout_loss(exp, bodies[:1], {n: v[:1] for n, v in params.items()}, steps=STEPS, **{k: x})

        assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-4), k

    rest = springs["rest"].detach()[:1].clone().requires_grad_(True)
    p1 = {n: v[:1] for n, v in params.items()}
    opt = torch.optim.Adam([rest], lr=1e-3)
    curve = []
    for _ in range(6):
        opt.zero_grad()
        loss = et.rollout_loss(exp, bodies[:1], p1, rest=rest, steps=STEPS).sum()
        loss.backward()
        opt.step()
        curve.append(loss.item())
    final = et.rollout_loss(exp, bodies[:1], p1, rest=rest, steps=STEPS).item()
    assert final < curve[0], curve + [final]


def test_jax_gradient_of_springs(setup):
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install jax)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import evoc.jax as ej

    exp, bodies, _ = setup
    params = ej.init_params(exp, bodies)
    ref = exp.simulate(
        bodies, [{k: np.asarray(v[i]) for k, v in params.items()} for i in range(2)], steps=STEPS, body_grads=True
    )
    springs = {k: jnp.asarray(np.stack([getattr(b, k) for b in bodies])) for k in ("rest", "stiffness", "actuation")}
    f = ej.rollout_loss(exp, bodies, steps=STEPS, springs=True)
    assert np.array_equal(np.asarray(f(params, springs)), ref.losses)
    g = jax.grad(lambda s: f(params, s).sum())(springs)
    for k in springs:
        assert np.array_equal(np.asarray(g[k]), np.stack([r["spring." + k] for r in ref.body_grads])), k
    with pytest.raises(ValueError, match="not one of"):
        f(params, {"mass": springs["rest"]})
