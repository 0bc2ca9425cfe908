"""ScaleLab's optimisers in PyTorch: SGD, LARS/LARC, LAMB, NovoGrad and AdamW as
engine/optim/*.cpp update a replica's parameters, with the settings engine/optim/
make_optimizer.cpp takes from the run spec, so that PyTorch takes ScaleLab's steps
(tests/app/pytorch/check_optimizer_steps.py compares the two).

    optimizer = make_optimizer(spec, model)   # spec: experiment.json's keys
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, LearningRate(spec, devices, steps))

Every group's base lr is 1.0, so the LambdaLR makes group["lr"] the step's rate, scaled,
scheduled and warmed up: the `lr` ScaleLab's Optimizer::step is given. SGD and AdamW are
torch.optim's own (ScaleLab's follow them float for float); LARS, LAMB and NovoGrad are written
out below, per parameter tensor, norms in float64 as ScaleLab takes them (tensor_norms.h).
"""
import torch
from torch import nn

# The run spec's optimiser keys with RunSpec's defaults (engine/train/run_spec.h), for a spec
# that lacks some: experiment.json has them all.
OPTIMIZER_DEFAULTS = {"optimizer": "sgd", "momentum": 0.9, "nesterov": False,
                      "weight_decay": 0.0, "decay_norm_and_bias": True, "beta1": 0.9,
                      "beta2": 0.999, "eps": 1e-8, "trust_coefficient": 0.001, "larc": False,
                      "trust_clamp": 0.0, "grad_averaging": False, "adapt_norm_and_bias": False}


def make_optimizer(spec, model):
    """The optimiser spec["optimizer"] names (sgd, lars, lamb, novograd, adamw) over `model`'s
    parameters, with the spec's settings, as make_optimizer.cpp builds it; lr 1.0."""
    s = {**OPTIMIZER_DEFAULTS, **spec}
    groups = parameter_groups(s, model)
    betas = (s["beta1"], s["beta2"])
    kind = s["optimizer"]
    if kind == "sgd":
        # No dampening: the spec has none.
        return torch.optim.SGD(groups, lr=1.0, momentum=s["momentum"], nesterov=s["nesterov"])
    if kind == "lars":
        return Lars(groups, momentum=s["momentum"], nesterov=s["nesterov"],
                    trust_coefficient=s["trust_coefficient"], larc=s["larc"])
    if kind == "lamb":
        return Lamb(groups, betas=betas, eps=s["eps"], trust_clamp=s["trust_clamp"])
    if kind == "novograd":
        return NovoGrad(groups, betas=betas, eps=s["eps"], grad_averaging=s["grad_averaging"])
    if kind == "adamw":
        return torch.optim.AdamW(groups, lr=1.0, betas=betas, eps=s["eps"])
    raise ValueError(f"optimizer '{kind}' is unknown: choose sgd, lars, lamb, novograd or adamw")


def parameter_groups(spec, model):
    """The parameters by ScaleLab's roles (ParamRole): the weights of linear and convolution
    layers; and the biases and batch-norm scales and shifts (is_norm_or_bias), which get weight
    decay only with decay_norm_and_bias and layer-wise adaptation (LARS, LAMB, NovoGrad) only
    with adapt_norm_and_bias. A batch norm's scale is named .weight like a layer's weight, so
    the role comes from the module, not the name. SGD and AdamW ignore "adapt"."""
    weights, norm_and_bias = [], []
    for module in model.modules():
        # _BatchNorm: BatchNorm1d/2d/3d and SyncBatchNorm alike.
        is_norm = isinstance(module, nn.modules.batchnorm._BatchNorm)
        for name, parameter in module.named_parameters(recurse=False):
            (norm_and_bias if is_norm or name == "bias" else weights).append(parameter)
    decay = spec["weight_decay"]
    groups = [{"params": weights, "weight_decay": decay, "adapt": True},
              {"params": norm_and_bias,
               "weight_decay": decay if spec["decay_norm_and_bias"] else 0.0,
               "adapt": spec["adapt_norm_and_bias"]}]
    return [group for group in groups if group["params"]]


class PerTensorOptimizer(torch.optim.Optimizer):
    """The loop LARS, LAMB and NovoGrad share: every tensor that has a gradient, one at a time,
    with its group's settings and its own state; update() is the optimiser's formula."""

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for w in group["params"]:
                if w.grad is not None:
                    self.update(w, w.grad, self.state[w], group)


class Lars(PerTensorOptimizer):
    """LARS (You, Gitman & Ginsburg 2017) as engine/optim/lars.cpp, which follows NVIDIA Apex's
    LARC around SGD with momentum. Per tensor, wd its group's weight decay, eta the trust
    coefficient, lr the group's rate:

        local = eta * ||w|| / (||g|| + wd * ||w||)    norms in float64; no eps: instead
        local = 1                                     if ||w|| = 0 or ||g|| = 0, or the
                                                      tensor is not adapted
        LARC:  local = min(local / lr, 1)             where the ratio was taken, and lr > 0,
                                                      so that lr * local = min(eta-ratio, lr)
        d   = (g + wd * w) * local
        buf = momentum * buf + d                      buf starts at 0
        d   = d + momentum * buf if nesterov else buf
        w   = w - lr * d

    lr multiplies the buffer, not the gradient entering it (PyTorch's form), so a schedule acts
    at once."""

    def __init__(self, params, momentum=0.9, nesterov=False, trust_coefficient=0.001,
                 larc=False):
        super().__init__(params, {"lr": 1.0, "weight_decay": 0.0, "adapt": True,
                                  "momentum": momentum, "nesterov": nesterov,
                                  "trust_coefficient": trust_coefficient, "larc": larc})

    def update(self, w, g, state, group):
        lr, wd, momentum = group["lr"], group["weight_decay"], group["momentum"]
        local = 1.0
        if group["adapt"]:
            w_norm, g_norm = w.double().norm(), g.double().norm()
            ratio = group["trust_coefficient"] * w_norm / (g_norm + wd * w_norm)
            if group["larc"] and lr > 0:
                ratio = (ratio / lr).clamp(max=1.0)
            local = torch.where((w_norm > 0) & (g_norm > 0), ratio, 1.0)
        d = g.add(w, alpha=wd) * local
        if momentum != 0:
            if not state:
                state["momentum_buffer"] = torch.zeros_like(w)
            buf = state["momentum_buffer"]
            buf.mul_(momentum).add_(d)
            d = d.add(buf, alpha=momentum) if group["nesterov"] else buf
        w.add_(d, alpha=-lr)


class Lamb(PerTensorOptimizer):
    """LAMB (You et al. 2019, algorithm 2) with Adam's bias correction, as engine/optim/
    lamb.cpp. Per tensor at step t (1 on the first), wd its group's weight decay:

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g^2
        u = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps) + wd * w     eps outside sqrt
        trust = ||w|| / ||u||, or 1 if either is 0 or the tensor is not adapted
        trust = min(trust, trust_clamp)               when trust_clamp > 0, the 1 included
        w = w - lr * trust * u

    The decay joins the update after the moments (decoupled, as in AdamW) and, unlike AdamW's,
    is scaled by the trust ratio with the rest of u."""

    def __init__(self, params, betas=(0.9, 0.999), eps=1e-8, trust_clamp=0.0):
        super().__init__(params, {"lr": 1.0, "weight_decay": 0.0, "adapt": True,
                                  "betas": betas, "eps": eps, "trust_clamp": trust_clamp})

    def update(self, w, g, state, group):
        (beta1, beta2), eps = group["betas"], group["eps"]
        if not state:
            state.update(step=0, m=torch.zeros_like(w), v=torch.zeros_like(w))
        state["step"] += 1
        t, m, v = state["step"], state["m"], state["v"]
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        u = (m * (1 / (1 - beta1 ** t))) / ((v * (1 / (1 - beta2 ** t))).sqrt() + eps)
        u.add_(w, alpha=group["weight_decay"])
        trust = torch.tensor(1.0, dtype=torch.float64, device=w.device)
        if group["adapt"]:
            # tensor_norms.h's safe_ratio: 1 when a norm is 0, never 0/0.
            w_norm, u_norm = w.double().norm(), u.double().norm()
            trust = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, 1.0)
        if group["trust_clamp"] > 0:
            trust = trust.clamp(max=group["trust_clamp"])
        # lr * trust in float64, rounded to float once, as ScaleLab's step factor.
        w.sub_(u * (group["lr"] * trust).float())


class NovoGrad(PerTensorOptimizer):
    """NovoGrad (Ginsburg et al. 2019) as engine/optim/novograd.cpp, which follows NVIDIA
    NeMo's and Apex's. Per tensor at step t, wd its group's weight decay, the second moment v
    one float64 number per tensor:

        v = ||g||^2                                   at t = 1: no bias correction
        v = beta2 * v + (1 - beta2) * ||g||^2         afterwards
        d = g / (sqrt(v) + eps) + wd * w              the decay is not normalised by v
        m = beta1 * m + (1 - beta1 if grad_averaging else 1) * d      m starts at 0
        w = w - lr * m

    A tensor that is not adapted keeps a float32 v per float instead: v_i = g_i^2 at t = 1,
    then beta2 * v_i + (1 - beta2) * g_i^2, and d_i = g_i / (sqrt(v_i) + eps) + wd * w_i."""

    def __init__(self, params, betas=(0.9, 0.999), eps=1e-8, grad_averaging=False):
        super().__init__(params, {"lr": 1.0, "weight_decay": 0.0, "adapt": True,
                                  "betas": betas, "eps": eps, "grad_averaging": grad_averaging})

    def update(self, w, g, state, group):
        (beta1, beta2), eps = group["betas"], group["eps"]
        first = not state
        if first:
            state["m"] = torch.zeros_like(w)
        if group["adapt"]:
            g2 = g.double().square().sum()
            state["v"] = g2 if first else beta2 * state["v"] + (1 - beta2) * g2
            # 1 / (sqrt(v) + eps) formed in float64 and rounded once, as ScaleLab multiplies
            # every float by it.
            d = g * (1 / (state["v"].sqrt() + eps)).float()
        else:
            if first:
                state["v"] = g * g
            else:
                state["v"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
            d = g / (state["v"].sqrt() + eps)
        d.add_(w, alpha=group["weight_decay"])
        m = state["m"]
        m.mul_(beta1).add_(d, alpha=1 - beta1 if group["grad_averaging"] else 1.0)
        w.sub_(m, alpha=group["lr"])
