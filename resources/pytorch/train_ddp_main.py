# ---- the training run (DistributedDataParallel) ----

DATASET_FOLDERS = {"fashion-mnist": "/usr/share/datasets/fashion-mnist",
                   "mnist": "/usr/share/datasets/mnist"}
SPEC_DEFAULTS = {**DEFAULTS, "model": "cnn", "dataset": "fashion-mnist", "data_dir": "",
                 "train_subset": 0, "test_subset": 0, "device": "cpu", "bucket_mb": 25,
                 "optimizer": "sgd", "momentum": 0.9, "nesterov": False, "weight_decay": 0.0,
                 "decay_norm_and_bias": True, "label_smoothing": 0.0, "eps": 1e-8, "seed": 0,
                 "threads": 1}


def parse_arguments():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default=os.path.join(here, "experiment.json"),
                        help="the experiment (ScaleLab's JSON config); default: beside this file")
    parser.add_argument("--data", default="", help="the dataset's folder (IDX files)")
    parser.add_argument("--initial", default="",
                        help="start from this state (scalelab-cli train --save-initial FILE)")
    parser.add_argument("--metrics-out", default="",
                        help="write ScaleLab's JSON lines (step, epoch and end rows) here")
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps")
    parser.add_argument("--timeout-s", type=float, default=300,
                        help="how long a collective waits for the other processes")
    return parser.parse_args()


def require(condition, message):
    if not condition:
        sys.exit(f"error: {message}")


def make_optimizer(spec, model):
    """SGD or AdamW as ScaleLab runs them; without decay on biases (and batch-norm scales and
    shifts) when decay_norm_and_bias is false. The rate comes from the LambdaLR: base 1.0."""
    decayed = [p for n, p in model.named_parameters()
               if spec["decay_norm_and_bias"] or not n.endswith(".bias")]
    kept = [p for n, p in model.named_parameters()
            if not spec["decay_norm_and_bias"] and n.endswith(".bias")]
    groups = [{"params": decayed, "weight_decay": spec["weight_decay"]},
              {"params": kept, "weight_decay": 0.0}]
    if spec["optimizer"] == "sgd":
        return torch.optim.SGD(groups, lr=1.0, momentum=spec["momentum"],
                               nesterov=spec["nesterov"])
    return torch.optim.AdamW(groups, lr=1.0, eps=spec["eps"])


class Metrics:
    """ScaleLab's metrics JSON lines (scalelab-cli train --metrics-out), written by rank 0."""

    def __init__(self, path):
        self.out = open(path, "w") if path else None

    def row(self, **fields):
        if self.out:
            self.out.write(json.dumps(fields) + "\n")
            self.out.flush()

    def close(self):
        if self.out:
            self.out.close()


def global_sums(*values):
    sums = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(sums)
    return sums.tolist()


def evaluate(model, inputs, labels, rank, world):
    """Loss and accuracy over the test set, each rank a shard (r, r + world, ...)."""
    model.eval()
    with torch.no_grad():
        x, y = inputs[rank::world], labels[rank::world]
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y, reduction="sum").item()
        correct = (out.argmax(1) == y).sum().item()
    model.train()
    loss, correct, count = global_sums(loss, correct, len(y))
    return loss / count, correct / count


def main():
    args = parse_arguments()
    require(tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (1, 13),
            f"this script needs PyTorch 1.13 or newer (found {torch.__version__})")
    with open(args.experiment) as f:
        experiment = json.load(f)
    spec = {**SPEC_DEFAULTS, **experiment}
    folder = args.data or spec["data_dir"] or DATASET_FOLDERS[spec["dataset"]]
    require(os.path.isdir(folder), f"no dataset folder {folder}: give --data")
    torch.set_num_threads(max(1, spec["threads"]))
    dist.init_process_group("nccl" if spec["device"] == "gpu" else "gloo",
                            timeout=datetime.timedelta(seconds=args.timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()

    images, labels = read_idx_set(folder, "train", spec["train_subset"])
    test_images, test_labels = read_idx_set(folder, "t10k", spec["test_subset"])
    statistics = channel_statistics(images)
    inputs, targets = torch.from_numpy(normalise(images, statistics)), torch.from_numpy(labels)
    test_inputs = torch.from_numpy(normalise(test_images, statistics))
    test_targets = torch.from_numpy(test_labels)

    model = build(spec["model"], images.shape[1], images.shape[2])
    if args.initial:
        model.load_state_dict(load_initial_state(args.initial), strict=True)
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=spec["bucket_mb"])
    per_rank = len(labels) // world
    steps_per_epoch = -(-per_rank // spec["batch"])
    optimizer = make_optimizer(spec, model)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, LearningRate(spec, world, steps_per_epoch))
    loss_of = nn.CrossEntropyLoss(label_smoothing=spec["label_smoothing"])
    metrics = Metrics(args.metrics_out if rank == 0 else "")
    metrics.row(type="start", devices=world, threads_per_device=spec["threads"], cores=world,
                global_batch=world * spec["batch"], steps_per_epoch=steps_per_epoch,
                parameters=sum(p.numel() for p in model.parameters()), warnings=[],
                experiment={**experiment, "devices": world}, engine="pytorch",
                machine=os.uname().nodename)

    step, started = 0, time.perf_counter()
    for epoch in range(1, spec["epochs"] + 1):
        order = torch.tensor(epoch_indices(len(labels), spec["seed"], world, rank, epoch - 1))
        epoch_loss = epoch_correct = epoch_count = 0.0
        for k in range(steps_per_epoch):
            begin = time.perf_counter()
            batch = order[k * spec["batch"]:(k + 1) * spec["batch"]]
            out = ddp(inputs[batch])
            loss = loss_of(out, targets[batch])
            optimizer.zero_grad()
            loss.backward()
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            schedule.step()
            correct = (out.argmax(1) == targets[batch]).sum().item()
            # The step's loss and accuracy over every device's batch, as ScaleLab's rows have
            # them: one small all-reduce per step.
            loss_sum, correct, count = global_sums(loss.item() * len(batch), correct, len(batch))
            step += 1
            epoch_loss, epoch_correct, epoch_count = (epoch_loss + loss_sum,
                                                      epoch_correct + correct, epoch_count + count)
            seconds = time.perf_counter() - begin
            metrics.row(type="step", step=step, epoch=epoch, loss=loss_sum / count,
                        accuracy=correct / count, lr=lr, images_per_s=count / seconds,
                        seconds=seconds, noise_scale=None, devices=[])
            if args.steps and step >= args.steps:
                break
        val_loss, val_accuracy = evaluate(model, test_inputs, test_targets, rank, world)
        metrics.row(type="epoch", step=step, epoch=epoch, loss=epoch_loss / epoch_count,
                    accuracy=epoch_correct / epoch_count, lr=lr,
                    images_per_s=epoch_count / (time.perf_counter() - started),
                    train_loss=epoch_loss / epoch_count,
                    train_accuracy=epoch_correct / epoch_count, val_loss=val_loss,
                    val_accuracy=val_accuracy, epoch_seconds=time.perf_counter() - started,
                    steady_images_per_s=None, other_programs_share=None, reached=[])
        if args.steps and step >= args.steps:
            break
    stopped = bool(args.steps) and step >= args.steps
    metrics.row(type="end", status="finished",
                message=f"stopped after {step} steps (--steps)" if stopped
                else f"trained {epoch} epochs", step=step, epoch=epoch, targets=[])
    metrics.close()
    # PyTorch 1.13 can hang at exit when DDP's reducer is the last owner of the process group:
    # its destructor joins gloo's threads while holding the GIL one of them waits for. So DDP
    # goes first, every process reaches the end, and the process ends without the
    # interpreter's teardown.
    del ddp
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
