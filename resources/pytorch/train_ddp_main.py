# ---- the training run (DistributedDataParallel) ----

# engine/data/load.cpp default_data_dir: only Fashion-MNIST has a Debian package.
DEFAULT_DATA_FOLDERS = {"fashion-mnist": "/usr/share/datasets/fashion-mnist"}
WARMUP_STEPS = 5  # the steps the steady images/s leaves out, as engine/train/trainer.cpp
EVAL_BATCH = 500  # test images per forward pass: bounds evaluation's memory (wrn's is large)
SPEC_DEFAULTS = {**DEFAULTS, **DATA_DEFAULTS, **MODEL_DEFAULTS, **OPTIMIZER_DEFAULTS,
                 "model": "cnn", "data_dir": "", "device": "cpu", "bucket_mb": 25,
                 "label_smoothing": 0.0, "threads": 1, "tf32": False, "deterministic": False,
                 "collective_timeout_s": 300, "targets": [0.85, 0.9], "target_accuracy": 0.0,
                 "patience": 1}


def parse_arguments():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default=os.path.join(here, "experiment.json"),
                        help="the experiment (ScaleLab's JSON config); default: beside this file")
    parser.add_argument("--data", default="",
                        help="the dataset's folder (IDX files, or CIFAR-10's binary batches)")
    parser.add_argument("--initial", default="",
                        help="start from this state (scalelab-cli train --save-initial FILE)")
    parser.add_argument("--metrics-out", default="",
                        help="write ScaleLab's JSON lines (step, epoch and end rows) here")
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps")
    parser.add_argument("--timeout-s", type=float, default=0,
                        help="how long a collective waits for the other processes; "
                             "default: the experiment's collective_timeout_s")
    return parser.parse_args()


def require(condition, message):
    if not condition:
        sys.exit(f"error: {message}")


def read_experiment(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as problem:
        sys.exit(f"error: cannot read the experiment {path}: {problem.strerror}; give "
                 "--experiment FILE (scalelab-cli export pytorch writes experiment.json)")
    except ValueError as problem:
        sys.exit(f"error: the experiment {path} is not JSON: {problem}")


def data_folder(spec, given):
    """The dataset's folder: --data, else the experiment's data_dir, else the default one;
    none for the synthetic dataset, which is generated."""
    if spec["dataset"] == "synthetic":
        return ""
    folder = given or spec["data_dir"] or DEFAULT_DATA_FOLDERS.get(spec["dataset"], "")
    require(folder, f"{spec['dataset']} has no default folder: give --data")
    require(os.path.isdir(folder), f"no dataset folder {folder}: give --data")
    return folder


def training_device(spec, local_rank):
    """This process's device: the CPU, or GPU `local_rank` of those CUDA_VISIBLE_DEVICES shows
    (launch.sh sets it from the experiment's gpus), with the experiment's TF32 and
    determinism settings."""
    if spec["device"] != "gpu":
        require(not spec["sync_bn"], "sync_bn: PyTorch's SyncBatchNorm runs on GPUs only; set "
                                     "sync_bn to false in the experiment or run on GPUs")
        return torch.device("cpu")
    require(torch.cuda.is_available(), "the experiment runs on GPUs and PyTorch sees none: "
                                       "set device to cpu in the experiment")
    torch.cuda.set_device(local_rank)
    torch.backends.cuda.matmul.allow_tf32 = spec["tf32"]
    torch.backends.cudnn.allow_tf32 = spec["tf32"]
    if spec["deterministic"]:
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
    return torch.device("cuda", local_rank)


def join_process_group(device, timeout_s):
    """Joins the run's processes: NCCL between GPUs, gloo between CPU processes. Where the
    rendezvous is on this machine (MASTER_ADDR a loopback address, as launch.sh sets it), every
    process is, so gloo talks over the loopback interface too rather than the address this
    machine's host name resolves to: many containers cannot resolve their own host name, and
    gloo would warn and fall back. GLOO_SOCKET_IFNAME, where set, still picks the interface."""
    if device.type == "cpu" and is_loopback(os.environ.get("MASTER_ADDR", "")) \
            and "lo" in (name for _, name in socket.if_nameindex()):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo",
                            timeout=datetime.timedelta(seconds=timeout_s))


def is_loopback(address):
    """Whether `address` (an IP address or "localhost") names this machine's loopback."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


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
    """The sums over every process of a few numbers (float64, on the CPU: gloo and NCCL alike
    take them there in this script's group)."""
    sums = torch.tensor(values, dtype=torch.float64)
    if dist.get_backend() == "nccl":
        sums = sums.cuda()
    dist.all_reduce(sums)
    return sums.tolist()


def evaluate(model, inputs, labels, device):
    """Loss and accuracy over the test set, each rank a shard (r, r + world, ...) taken
    EVAL_BATCH images at a time, with the batch norms' running statistics averaged over the
    processes first, as ScaleLab does."""
    rank, world = dist.get_rank(), dist.get_world_size()
    average_running_statistics(model)
    model.eval()
    loss = correct = 0.0
    with torch.no_grad():
        for x, y in zip(inputs[rank::world].split(EVAL_BATCH),
                        labels[rank::world].split(EVAL_BATCH)):
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss += nn.functional.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
    model.train()
    loss, correct, count = global_sums(loss, correct, len(labels[rank::world]))
    return loss / count, correct / count


class Targets:
    """The first epoch at which validation accuracy reached each of the experiment's targets
    (ScaleLab's marks), and its early stop: accuracy at or above target_accuracy for
    `patience` epochs in a row."""

    def __init__(self, spec):
        self.marks, self.reached = spec["targets"], []
        self.stop_at, self.patience, self.held = spec["target_accuracy"], spec["patience"], 0

    def new_crossings(self, accuracy, seconds, step, epoch, images):
        done = {r["target"] for r in self.reached}
        new = [{"target": t, "seconds": seconds, "step": step, "epoch": epoch, "images": images}
               for t in self.marks if t not in done and accuracy >= t]
        self.reached += new
        return new

    def stop(self, accuracy):
        self.held = self.held + 1 if accuracy >= self.stop_at else 0
        return self.stop_at > 0 and self.held >= self.patience


def main():
    args = parse_arguments()
    require(tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (1, 13),
            f"this script needs PyTorch 1.13 or newer (found {torch.__version__})")
    experiment = read_experiment(args.experiment)
    spec = {**SPEC_DEFAULTS, **experiment}
    folder = data_folder(spec, args.data)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = training_device(spec, local_rank)
    # threads 0: the cores shared among this machine's processes, as ScaleLab shares them.
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("WORLD_SIZE", "1"))
    torch.set_num_threads(spec["threads"] or max(1, len(os.sched_getaffinity(0)) // local_world))

    try:
        images, labels = load_dataset(spec, folder, "train")
        test_images, test_labels = load_dataset(spec, folder, "test")
    except (OSError, ValueError) as problem:
        sys.exit(f"error: the {spec['dataset']} dataset: {problem}")
    statistics = channel_statistics(images)
    targets = torch.from_numpy(labels)
    test_inputs = torch.from_numpy(normalise(test_images, statistics))
    test_targets = torch.from_numpy(test_labels)
    # Without augmentation every epoch feeds the same inputs: normalised once.
    fixed_inputs = torch.from_numpy(normalise(images, statistics)) \
        if spec["augment"] == "none" else None

    def inputs_of(samples, epoch):
        if fixed_inputs is not None:
            return fixed_inputs[samples]
        return torch.from_numpy(training_inputs(images, statistics, samples, spec, epoch - 1, rank))

    # The experiment's seed draws the initial weights (PyTorch's numbers, ScaleLab's
    # distributions; --initial replaces them with ScaleLab's own), the same on every process.
    torch.manual_seed(spec["seed"])
    try:
        model = build(spec["model"], images.shape[1], images.shape[2], options=spec)
    except ValueError as problem:
        sys.exit(f"error: the model: {problem}")
    if args.initial:
        try:
            model.load_state_dict(load_initial_state(args.initial), strict=True)
        except (OSError, ValueError, RuntimeError) as problem:
            # RuntimeError: load_state_dict's missing, unexpected or misshapen tensors, a line
            # each: joined into the one line the error is said in.
            said = "; ".join(line.strip() for line in str(problem).splitlines() if line.strip())
            sys.exit(f"error: --initial {args.initial} is not this experiment's initial state "
                     f"(scalelab-cli train --config experiment.json --save-initial FILE writes "
                     f"it): {said}")
    # Every input is read and checked above, before the process joins the others: bad input
    # is said in one line, before any network.
    join_process_group(device, args.timeout_s or spec["collective_timeout_s"])
    rank, world = dist.get_rank(), dist.get_world_size()
    if spec["sync_bn"]:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.to(device)
    # broadcast_buffers=False: each process keeps its own running statistics, as ScaleLab's
    # devices do, and evaluate() averages them (DDP's default copies rank 0's at every forward).
    ddp = nn.parallel.DistributedDataParallel(
        model, device_ids=[local_rank] if device.type == "cuda" else None,
        bucket_cap_mb=spec["bucket_mb"], broadcast_buffers=False)
    # Dropout (wrn) draws other masks on each process, as ScaleLab's devices do.
    torch.manual_seed(spec["seed"] + 1 + rank)
    # A step is `accumulation` micro-batches of `batch` samples per process, or what is left
    # at the epoch's end; engine/train/trainer.cpp counts the steps so.
    per_rank = len(labels) // world
    step_samples = spec["batch"] * spec["accumulation"]
    steps_per_epoch = -(-per_rank // step_samples)
    optimizer = make_optimizer(spec, model)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, LearningRate(spec, world, steps_per_epoch))
    loss_sum_of = nn.CrossEntropyLoss(reduction="sum", label_smoothing=spec["label_smoothing"])
    metrics = Metrics(args.metrics_out if rank == 0 else "")
    metrics.row(type="start", devices=world, threads_per_device=torch.get_num_threads(),
                cores=len(os.sched_getaffinity(0)), global_batch=world * step_samples,
                steps_per_epoch=steps_per_epoch,
                parameters=sum(p.numel() for p in model.parameters()), warnings=[],
                experiment={**experiment, "devices": world}, engine="pytorch",
                machine=os.uname().nodename)

    marks = Targets(spec)
    step, trained_seconds, images_seen, steady = 0, 0.0, 0.0, [0.0, 0.0]
    end = {"status": "finished", "message": f"trained {spec['epochs']} epochs"}
    for epoch in range(1, spec["epochs"] + 1):
        order = torch.tensor(epoch_indices(len(labels), spec["seed"], world, rank, epoch - 1))
        epoch_loss = epoch_correct = epoch_count = epoch_seconds = 0.0
        for k in range(steps_per_epoch):
            begin = time.perf_counter()
            samples = order[k * step_samples:(k + 1) * step_samples]
            micro_batches = samples.split(spec["batch"])
            lr = optimizer.param_groups[0]["lr"]
            optimizer.zero_grad()
            loss_sum = correct = 0.0
            for i, micro in enumerate(micro_batches):
                y = targets[micro].to(device)
                # Only the last micro-batch's backward all-reduces: the others' gradients
                # accumulate locally (DDP's no_sync), as ScaleLab's accumulation does.
                with ddp.no_sync() if i + 1 < len(micro_batches) else contextlib.nullcontext():
                    out = ddp(inputs_of(micro, epoch).to(device))
                    loss = loss_sum_of(out, y)
                    # The step's gradient is the mean over the process's samples of the step:
                    # each micro-batch's sum divided by them all.
                    (loss / len(samples)).backward()
                loss_sum += loss.item()
                correct += (out.argmax(1) == y).sum().item()
            # The step's loss and accuracy over every process's samples, as ScaleLab's rows
            # have them: one small all-reduce per step.
            loss_sum, correct, count = global_sums(loss_sum, correct, len(samples))
            step += 1
            if not math.isfinite(loss_sum):
                end = {"status": "diverged",
                       "message": f"the loss became {loss_sum / count} at step {step} (epoch "
                                  f"{epoch}, lr {lr}): lower the learning rate or add warm-up"}
                break
            optimizer.step()
            schedule.step()
            seconds = time.perf_counter() - begin
            epoch_loss, epoch_correct = epoch_loss + loss_sum, epoch_correct + correct
            epoch_count, epoch_seconds = epoch_count + count, epoch_seconds + seconds
            if step > WARMUP_STEPS:
                steady = [steady[0] + count, steady[1] + seconds]
            metrics.row(type="step", step=step, epoch=epoch, loss=loss_sum / count,
                        accuracy=correct / count, lr=lr, images_per_s=count / seconds,
                        seconds=seconds, noise_scale=None, devices=[])
            if args.steps and step >= args.steps:
                end = {"status": "finished", "message": f"stopped after {step} steps (--steps)"}
                break
        if end["status"] == "diverged":
            break
        trained_seconds, images_seen = trained_seconds + epoch_seconds, images_seen + epoch_count
        val_loss, val_accuracy = evaluate(model, test_inputs, test_targets, device)
        metrics.row(type="epoch", step=step, epoch=epoch, loss=epoch_loss / epoch_count,
                    accuracy=epoch_correct / epoch_count, lr=lr,
                    images_per_s=epoch_count / epoch_seconds,
                    train_loss=epoch_loss / epoch_count,
                    train_accuracy=epoch_correct / epoch_count, val_loss=val_loss,
                    val_accuracy=val_accuracy, epoch_seconds=epoch_seconds,
                    steady_images_per_s=steady[0] / steady[1] if steady[1] > 0 else None,
                    other_programs_share=None,
                    reached=marks.new_crossings(val_accuracy, trained_seconds, step, epoch,
                                                images_seen))
        if marks.stop(val_accuracy):
            end = {"status": "reached_target",
                   "message": f"validation accuracy reached {spec['target_accuracy']} for "
                              f"{spec['patience']} consecutive epoch(s) at epoch {epoch}"}
            break
        if args.steps and step >= args.steps:
            break
    metrics.row(type="end", **end, step=step, epoch=epoch, targets=marks.reached)
    metrics.close()
    # PyTorch 1.13 can hang at exit when DDP's reducer is the last owner of the process group:
    # its destructor joins gloo's threads while holding the GIL one of them waits for. So DDP
    # goes first, every process reaches the end, and the process ends without the
    # interpreter's teardown.
    del ddp
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(3 if end["status"] == "diverged" else 0)  # scalelab-cli's exit codes


if __name__ == "__main__":
    main()
