"""ScaleLab's learning rate at every step in Python: the scaling rule, the schedule and the
warm-up exactly as engine/optim/lr_schedule.h defines them (a pure function of the step),
for a torch.optim.lr_scheduler.LambdaLR or a loop that sets each step's rate.

    lr = LearningRate(spec, devices=2, steps_per_epoch=32)
    sgd = torch.optim.SGD(model.parameters(), lr=1.0, momentum=0.9)
    schedule = torch.optim.lr_scheduler.LambdaLR(sgd, lr)   # lr(step) times the base 1.0

`spec` is a run's experiment as `scalelab-cli` writes it (experiment.json, a --config file):
the keys lr, lr_scaling, reference_batch, batch, accumulation, schedule, gamma, step_epochs,
milestones, min_lr, poly_power, epochs, warmup, warmup_length, warmup_unit,
warmup_start_factor, with ScaleLab's defaults where a key is absent.
"""
import bisect
import math

DEFAULTS = {"lr": 0.05, "lr_scaling": "none", "reference_batch": 256, "batch": 128,
            "accumulation": 1, "schedule": "constant", "gamma": 0.1, "step_epochs": 30,
            "milestones": [], "min_lr": 0.0, "poly_power": 2.0, "epochs": 2,
            "warmup": "gradual", "warmup_length": 0.0, "warmup_unit": "epochs",
            "warmup_start_factor": 0.1}


def effective_lr(spec, devices):
    """lr times the scaling rule in k = global batch / reference batch (none, linear, sqrt)."""
    k = devices * spec["batch"] * spec["accumulation"] / spec["reference_batch"]
    rule = spec["lr_scaling"]
    return spec["lr"] * {"none": 1.0, "linear": k, "sqrt": math.sqrt(k)}[rule]


class LearningRate:
    """lr(step) = schedule(step) * warmup(step), step counted from 0 (LrSchedule::lr)."""

    def __init__(self, spec, devices, steps_per_epoch):
        self.spec = {**DEFAULTS, **spec}
        self.base = effective_lr(self.spec, devices)
        self.per_epoch = steps_per_epoch
        self.total = self.spec["epochs"] * steps_per_epoch
        length = self.spec["warmup_length"]
        self.warmup_steps = length if self.spec["warmup_unit"] == "steps" else \
            length * steps_per_epoch
        self.milestones = sorted(self.spec["milestones"])

    def scheduled(self, step):
        s, epoch = self.spec, step // self.per_epoch
        kind = s["schedule"]
        if kind == "constant":
            return self.base
        if kind == "step":
            return self.base * math.pow(s["gamma"], float(epoch // s["step_epochs"]))
        if kind == "multistep":
            return self.base * math.pow(s["gamma"],
                                        float(bisect.bisect_right(self.milestones, epoch)))
        if kind == "cosine":
            if step >= self.total:
                return s["min_lr"]
            progress = step / self.total
            return s["min_lr"] + (self.base - s["min_lr"]) * (1.0 + math.cos(math.pi * progress)) \
                / 2.0
        if kind == "poly":
            if step >= self.total:
                return 0.0
            return self.base * math.pow(1.0 - step / self.total, s["poly_power"])
        if kind == "exp":
            return self.base * math.pow(s["gamma"], float(epoch))
        raise ValueError(f"schedule '{kind}' is unknown")

    def warmup(self, step):
        s, length = self.spec, self.warmup_steps
        if length == 0:
            return 1.0
        start = s["warmup_start_factor"]
        if s["warmup"] == "gradual":
            return start + (1.0 - start) * min(float(step), length) / length
        if s["warmup"] == "per-epoch":
            epochs = s["warmup_length"]
            return start + (1.0 - start) * min(float(step // self.per_epoch), epochs) / epochs
        if s["warmup"] == "constant":
            return start if step < length else 1.0
        raise ValueError(f"warm-up '{s['warmup']}' is unknown")

    def __call__(self, step):
        return self.scheduled(step) * self.warmup(step)
