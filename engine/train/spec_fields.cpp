#include "train/spec_fields.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "optim/format_number.h"

namespace scalelab {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double largest_int = std::numeric_limits<int>::max();

// Ranges by how they read: at_least(1) is [1, inf), whole numbers up to int's maximum.
constexpr NumberRange from_to(double min, double max) {
    return {.min = min, .max = max};
}
constexpr NumberRange at_least(double min) {
    return {.min = min, .max = infinity};
}
constexpr NumberRange above(double min) {
    return {.min = min, .max = infinity, .min_open = true};
}
constexpr NumberRange fraction() {  // [0, 1)
    return {.min = 0, .max = 1, .max_open = true};
}
constexpr NumberRange whole_from(int min) {
    return {.min = double(min), .max = largest_int};
}

bool is_wrn(const RunSpec& s) {
    return s.model == "wrn";
}
bool is_synthetic(const RunSpec& s) {
    return s.dataset == "synthetic";
}
bool reads_files(const RunSpec& s) {
    return s.dataset != "synthetic";
}
bool on_gpus(const RunSpec& s) {
    return s.device == DeviceKind::Gpu;
}
bool on_cpus(const RunSpec& s) {
    return s.device == DeviceKind::Cpu;
}
bool has_momentum(const RunSpec& s) {
    return s.optimizer == OptimizerKind::Sgd || s.optimizer == OptimizerKind::Lars;
}
bool is_lars(const RunSpec& s) {
    return s.optimizer == OptimizerKind::Lars;
}
bool is_lamb(const RunSpec& s) {
    return s.optimizer == OptimizerKind::Lamb;
}
bool is_novograd(const RunSpec& s) {
    return s.optimizer == OptimizerKind::NovoGrad;
}
bool adam_family(const RunSpec& s) {
    return s.optimizer == OptimizerKind::Lamb || s.optimizer == OptimizerKind::NovoGrad ||
           s.optimizer == OptimizerKind::AdamW;
}
bool layer_wise(const RunSpec& s) {
    return s.optimizer == OptimizerKind::Lars || s.optimizer == OptimizerKind::Lamb ||
           s.optimizer == OptimizerKind::NovoGrad;
}
bool scales_lr(const RunSpec& s) {
    return s.lr_scaling != LrScaling::None;
}
bool decays_by_gamma(const RunSpec& s) {
    return s.schedule == ScheduleKind::Step || s.schedule == ScheduleKind::MultiStep ||
           s.schedule == ScheduleKind::Exp;
}
bool is_step(const RunSpec& s) {
    return s.schedule == ScheduleKind::Step;
}
bool is_multistep(const RunSpec& s) {
    return s.schedule == ScheduleKind::MultiStep;
}
bool is_cosine(const RunSpec& s) {
    return s.schedule == ScheduleKind::Cosine;
}
bool is_poly(const RunSpec& s) {
    return s.schedule == ScheduleKind::Poly;
}

using G = FieldGroup;

std::vector<SpecField> make_fields() {
    // clang-format off
    return {
        {"model", &RunSpec::model, G::ModelAndData, "model", "Model",
         "The network to train", "", {}, "", nullptr, model_names, {}},
        {"width", &RunSpec::width, G::ModelAndData, "width", "WRN width",
         "WideResNet's widening factor k", "", from_to(1, 64), "with wrn", is_wrn, nullptr, {}},
        {"dataset", &RunSpec::dataset, G::ModelAndData, "dataset", "Dataset",
         "The images to train on; synthetic ones are generated and need no folder", "", {}, "",
         nullptr, dataset_names, {}},
        {"data_dir", &RunSpec::data_dir, G::ModelAndData, "data", "Folder",
         "The folder with the dataset's files; empty: the dataset's default folder", "", {},
         "with a dataset read from files", reads_files, nullptr, {}},
        {"synthetic_train", &RunSpec::synthetic_train, G::Advanced, "synthetic-train",
         "Synthetic train", "Training images of the synthetic dataset", "images", whole_from(1),
         "with the synthetic dataset", is_synthetic, nullptr, {}},
        {"synthetic_test", &RunSpec::synthetic_test, G::Advanced, "synthetic-test",
         "Synthetic test", "Test images of the synthetic dataset", "images", whole_from(1),
         "with the synthetic dataset", is_synthetic, nullptr, {}},
        {"synthetic_channels", &RunSpec::synthetic_channels, G::Advanced, "synthetic-channels",
         "Synthetic channels", "Channels of the synthetic images, 1 or 3", "", from_to(1, 3),
         "with the synthetic dataset", is_synthetic, nullptr, {}},
        {"synthetic_size", &RunSpec::synthetic_size, G::Advanced, "synthetic-size",
         "Synthetic size", "Side of the synthetic images, a multiple of 4", "pixels",
         from_to(8, 256), "with the synthetic dataset", is_synthetic, nullptr, {}},
        {"augment", &RunSpec::augment, G::ModelAndData, "augment", "Augmentation",
         "Seeded per device and epoch: flip; crop-flip (CIFAR-10's); assessment (the course's: "
         "flip, rotation, shear, scale and colour jitter)", "", {}, "", nullptr, nullptr, {}},
        {"train_subset", &RunSpec::train_subset, G::Advanced, "train-subset", "Train subset",
         "Train on the first N training images only, for quick runs; 0: all", "images",
         whole_from(0), "", nullptr, nullptr, {}},
        {"test_subset", &RunSpec::test_subset, G::Advanced, "test-subset", "Test subset",
         "Evaluate on the first N test images only; 0: all", "images", whole_from(0), "",
         nullptr, nullptr, {}},
        {"epochs", &RunSpec::epochs, G::Training, "epochs", "Length",
         "Passes over the training set", "epochs", whole_from(1), "", nullptr, nullptr, {}},
        {"batch", &RunSpec::batch, G::DevicesAndBatch, "batch", "Batch per device",
         "Images each device processes per micro-batch", "images", from_to(1, 65536), "",
         nullptr, nullptr, {}},
        {"device", &RunSpec::device, G::DevicesAndBatch, "device", "Run on",
         "cpu: worker threads that share the cores; gpu: the machine's NVIDIA GPUs "
         "(scalelab-cli devices lists them)", "", {}, "", nullptr, nullptr, {}},
        {"devices", &RunSpec::devices, G::DevicesAndBatch, "devices", "Devices",
         "Data-parallel replicas, one worker thread and model replica each (on GPUs, at most "
         "the GPUs there are)", "", from_to(1, max_cpu_devices), "", nullptr, nullptr, {}},
        {"gpus", &RunSpec::gpus, G::DevicesAndBatch, "gpus", "GPUs",
         "Which GPUs to train on, one per device, e.g. 0,2; empty: the first ones", "",
         at_least(0), "with GPUs", on_gpus, nullptr, "0,2"},
        {"tf32", &RunSpec::tf32, G::DevicesAndBatch, "tf32", "TF32 math",
         "Tensor-core TF32 in convolutions and matrix products: faster, about 3 decimal digits",
         "", {}, "with GPUs", on_gpus, nullptr, {}},
        {"deterministic", &RunSpec::deterministic, G::DevicesAndBatch, "deterministic",
         "Deterministic", "Only algorithms that give the same bits on every run (may be slower)",
         "", {}, "with GPUs", on_gpus, nullptr, {}},
        {"collective_timeout_s", &RunSpec::collective_timeout_s, G::Advanced,
         "collective-timeout-s", "Collective timeout",
         "A collective still unfinished after this long stops every GPU's collectives and ends "
         "the run with the reason", "s", from_to(1, 86400), "with GPUs", on_gpus, nullptr, {}},
        {"accumulation", &RunSpec::accumulation, G::Advanced, "accumulation", "Accumulation",
         "Micro-batches per optimizer step; no communication until the last", "",
         from_to(1, 1024), "", nullptr, nullptr, {}},
        {"bucket_mb", &RunSpec::bucket_mb, G::Advanced, "bucket-mb", "Bucket size",
         "Gradient all-reduce bucket cap, as DDP's bucket_cap_mb", "MB",
         NumberRange{.min = 0, .max = 1024, .min_open = true}, "", nullptr, nullptr, {}},
        {"first_bucket_mb", &RunSpec::first_bucket_mb, G::Advanced, "first-bucket-mb",
         "First bucket", "Cap of the first bucket (the last layers' gradients), smaller so that "
         "communication starts early", "MB", NumberRange{.min = 0, .max = 1024, .min_open = true},
         "", nullptr, nullptr, {}},
        {"overlap", &RunSpec::overlap, G::Advanced, "no-overlap",
         "Overlap all-reduce with backward",
         "Reduce each bucket as soon as its gradients are ready (--no-overlap: after backward, to "
         "see the difference)", "", {}, "", nullptr, nullptr, {}},
        {"sync_bn", &RunSpec::sync_bn, G::Advanced, "sync-bn", "Synchronised batch norm",
         "Batch-norm statistics over the global batch instead of per device", "", {}, "",
         nullptr, nullptr, {}},
        {"zero_init_residual", &RunSpec::zero_init_residual, G::Advanced, "zero-init-residual",
         "Zero-init residual",
         "Each residual block's last batch-norm gamma starts at 0 (resnet8, resnet20)", "", {},
         "", nullptr, nullptr, {}},
        {"ghost_batch", &RunSpec::ghost_batch, G::Advanced, "ghost-batch", "Ghost batch",
         "Batch-norm statistics over virtual batches of this size, dividing the batch per "
         "device; 0: off", "images", whole_from(0), "", nullptr, nullptr, {}},
        {"noise_scale_beta", &RunSpec::noise_scale_beta, G::Advanced, "noise-scale-beta",
         "Noise-scale β", "Decay of the gradient noise scale's running averages", "",
         fraction(), "", nullptr, nullptr, {}},
        {"targets", &RunSpec::targets, G::Advanced, "targets", "Accuracy marks",
         "Validation accuracies whose first crossing (time, step, epoch, images) each run "
         "records, at most 16", "", NumberRange{.min = 0, .max = 1, .min_open = true}, "",
         nullptr, nullptr,
         "0.85,0.9"},
        {"optimizer", &RunSpec::optimizer, G::Optimizer, "optimizer", "Optimizer",
         "sgd; LARS and LAMB (layer-wise trust ratios for large batches); NovoGrad; AdamW", "",
         {}, "", nullptr, nullptr, {}},
        {"lr", &RunSpec::lr, G::Optimizer, "lr", "Learning rate",
         "The base learning rate, before the scaling rule", "", above(0), "", nullptr, nullptr, {}},
        {"lr_scaling", &RunSpec::lr_scaling, G::Optimizer, "lr-scaling", "LR scaling",
         "Effective lr = lr × rule(global batch / reference batch): none 1, linear k, sqrt √k",
         "", {}, "", nullptr, nullptr, {}},
        {"reference_batch", &RunSpec::reference_batch, G::Optimizer, "reference-batch",
         "Reference batch", "The global batch the base learning rate was tuned for", "images",
         whole_from(1), "with an LR scaling rule", scales_lr, nullptr, {}},
        {"momentum", &RunSpec::momentum, G::Optimizer, "momentum", "Momentum",
         "Momentum of sgd and LARS", "", fraction(), "with sgd or LARS", has_momentum, nullptr, {}},
        {"nesterov", &RunSpec::nesterov, G::Optimizer, "nesterov", "Nesterov momentum",
         "Nesterov momentum; needs a momentum above 0", "", {}, "with sgd or LARS",
         has_momentum, nullptr, {}},
        {"weight_decay", &RunSpec::weight_decay, G::Optimizer, "weight-decay", "Weight decay",
         "L2 penalty: SGD and LARS add it to the gradient, AdamW and LAMB to the update, NovoGrad to the normalised gradient; 0: none", "", at_least(0), "", nullptr,
         nullptr, {}},
        {"decay_norm_and_bias", &RunSpec::decay_norm_and_bias, G::Advanced,
         "no-decay-norm-bias", "Weight decay on norm and bias",
         "Weight decay also on batch-norm and bias parameters (--no-decay-norm-bias: not on "
         "them)", "", {}, "", nullptr, nullptr, {}},
        {"label_smoothing", &RunSpec::label_smoothing, G::Training, "label-smoothing",
         "Label smoothing", "0: plain cross-entropy", "", fraction(), "", nullptr, nullptr, {}},
        {"beta1", &RunSpec::beta1, G::Optimizer, "beta1", "Beta 1",
         "First-moment decay of LAMB, NovoGrad and AdamW", "", fraction(),
         "with LAMB, NovoGrad or AdamW", adam_family, nullptr, {}},
        {"beta2", &RunSpec::beta2, G::Optimizer, "beta2", "Beta 2", "Second-moment decay", "",
         fraction(), "with LAMB, NovoGrad or AdamW", adam_family, nullptr, {}},
        {"eps", &RunSpec::eps, G::Optimizer, "eps", "Epsilon", "Added to the denominator", "",
         NumberRange{.min = 0, .max = 1, .min_open = true, .max_open = true},
         "with LAMB, NovoGrad or AdamW", adam_family, nullptr, {}},
        {"trust_coefficient", &RunSpec::trust_coefficient, G::Optimizer, "trust-coefficient",
         "Trust coefficient", "LARS eta; 0.001 is usual", "", NumberRange{.min = 0, .max = 1,
         .min_open = true},
         "with LARS", is_lars, nullptr, {}},
        {"larc", &RunSpec::larc, G::Optimizer, "larc", "LARC (clip to the global LR)",
         "The layer-wise learning rate never exceeds the global one (LARC)", "", {},
         "with LARS", is_lars, nullptr, {}},
        {"trust_clamp", &RunSpec::trust_clamp, G::Optimizer, "trust-clamp", "Trust clamp",
         "LAMB's trust ratio clamped to [0, clamp]; 0: no clamp", "", at_least(0), "with LAMB",
         is_lamb, nullptr, {}},
        {"grad_averaging", &RunSpec::grad_averaging, G::Optimizer, "grad-averaging",
         "Gradient averaging", "NovoGrad's first moment averages (1 − beta1) × gradient", "", {},
         "with NovoGrad", is_novograd, nullptr, {}},
        {"adapt_norm_and_bias", &RunSpec::adapt_norm_and_bias, G::Optimizer, "adapt-norm-bias",
         "Adapt norm and bias layers",
         "Layer-wise adaptation also for batch-norm and bias tensors", "", {},
         "with LARS, LAMB or NovoGrad", layer_wise, nullptr, {}},
        {"schedule", &RunSpec::schedule, G::Schedule, "schedule", "Schedule",
         "How the learning rate changes over the epochs", "", {}, "", nullptr, nullptr, {}},
        {"gamma", &RunSpec::gamma, G::Schedule, "gamma", "Gamma",
         "Decay factor of step, multistep and exp (per epoch)", "",
         NumberRange{.min = 0, .max = 1, .min_open = true}, "with step, multistep or exp",
         decays_by_gamma, nullptr, {}},
        {"step_epochs", &RunSpec::step_epochs, G::Schedule, "step-epochs", "Step every",
         "Decay by gamma every this many epochs", "epochs", whole_from(1), "with step", is_step,
         nullptr, {}},
        {"milestones", &RunSpec::milestones, G::Schedule, "milestones", "Milestones",
         "Decay by gamma at each of these epochs, e.g. 30,60", "epochs", at_least(1),
         "with multistep", is_multistep, nullptr, "30,60"},
        {"min_lr", &RunSpec::min_lr, G::Schedule, "min-lr", "Minimum LR",
         "The floor cosine annealing ends at, at most lr", "", at_least(0), "with cosine",
         is_cosine, nullptr, {}},
        {"poly_power", &RunSpec::poly_power, G::Schedule, "poly-power", "Power",
         "lr × (1 − t/T)^power", "", NumberRange{.min = 0, .max = 10, .min_open = true},
         "with poly", is_poly, nullptr, {}},
        {"warmup", &RunSpec::warmup, G::Warmup, "warmup", "Kind",
         "gradual: linear per step; per-epoch: the same ramp once per epoch; constant: the "
         "start factor, then a jump to 1", "", {}, "", nullptr, nullptr, {}},
        {"warmup_length", &RunSpec::warmup_length, G::Warmup, "", "Length",
         "Length of the warm-up in its unit (--warmup-epochs X or --warmup-steps N); 0: none",
         "", at_least(0), "", nullptr, nullptr, {}},
        {"warmup_unit", &RunSpec::warmup_unit, G::Warmup, "", "Unit",
         "The unit of the warm-up's length", "", {}, "", nullptr, nullptr, {}},
        {"warmup_start_factor", &RunSpec::warmup_start_factor, G::Warmup, "warmup-start-factor",
         "Start factor", "The warm-up starts at lr × factor and rises linearly to lr", "",
         from_to(0, 1), "", nullptr, nullptr, {}},
        {"seed", &RunSpec::seed, G::Training, "seed", "Seed",
         "Seed of initialisation, shuffling and augmentation: the same spec and seed give the "
         "same curves", "", at_least(0), "", nullptr, nullptr, {}},
        {"threads", &RunSpec::threads, G::DevicesAndBatch, "threads", "Threads per device",
         "The cores one CPU device computes on: a fixed unit, as a GPU is, so that 1 and N "
         "devices compare fairly; 0 shares all cores among the devices", "", from_to(0, 1024),
         "with CPU devices", on_cpus, nullptr, {}},
        {"target_accuracy", &RunSpec::target_accuracy, G::Training, "target-accuracy",
         "Target accuracy",
         "Stop once validation accuracy reaches it for `patience` epochs in a row; 0: train "
         "every epoch", "", from_to(0, 1), "", nullptr, nullptr, {}},
        {"patience", &RunSpec::patience, G::Training, "patience", "Patience",
         "Consecutive epochs at or above the target before the run stops", "epochs",
         whole_from(1), "", nullptr, nullptr, {}},
    };
    // clang-format on
}

}  // namespace

bool NumberRange::contains(double value) const {
    return (min_open ? value > min : value >= min) && (max_open ? value < max : value <= max);
}

std::string NumberRange::text(bool whole) const {
    using optim::format_number;
    const bool has_min = std::isfinite(min) && !(whole && min <= -largest_int);
    const bool has_max = std::isfinite(max) && !(whole && max >= largest_int);
    if (whole) {
        if (has_min && has_max)
            return "from " + format_number(min) + " to " + format_number(max);
        if (has_min)
            return "of at least " + format_number(min);
        return has_max ? "of at most " + format_number(max) : "";
    }
    if (has_min && has_max)
        return std::string("in ") + (min_open ? "(" : "[") + format_number(min) + ", " +
               format_number(max) + (max_open ? ")" : "]");
    if (has_min)
        return (min_open ? "above " : "of at least ") + format_number(min);
    return has_max ? (max_open ? "below " : "of at most ") + format_number(max) : "";
}

bool SpecField::whole() const {
    return std::holds_alternative<int RunSpec::*>(member) ||
           std::holds_alternative<std::uint64_t RunSpec::*>(member) ||
           std::holds_alternative<std::vector<int> RunSpec::*>(member);
}

const std::vector<SpecField>& spec_fields() {
    static const std::vector<SpecField> fields = make_fields();
    return fields;
}

const SpecField* find_spec_field(std::string_view key) {
    for (const SpecField& field : spec_fields())
        if (field.key == key)
            return &field;
    return nullptr;
}

const SpecField& spec_field(const FieldMember& member) {
    for (const SpecField& field : spec_fields())
        if (field.member == member)
            return field;
    // Every member has an entry: test_spec_fields checks each against RunSpec's JSON.
    std::abort();
}

std::string field_value_text(const SpecField& field, const RunSpec& spec) {
    return std::visit(
        [&spec](auto member) -> std::string {
            using T = std::remove_cvref_t<decltype(spec.*member)>;
            const T& value = spec.*member;
            if constexpr (std::is_same_v<T, std::string>)
                return value;
            else if constexpr (std::is_same_v<T, bool>)
                return value ? "true" : "false";
            else if constexpr (std::is_enum_v<T>)
                return std::string(to_string(value));
            else if constexpr (std::is_same_v<T, std::vector<int>> ||
                               std::is_same_v<T, std::vector<double>>) {
                std::string text;
                for (const auto item : value) {
                    text += text.empty() ? "" : ",";
                    if constexpr (std::is_same_v<T, std::vector<int>>)
                        text += std::to_string(item);
                    else
                        text += optim::format_number(item);
                }
                return text;
            } else if constexpr (std::is_same_v<T, std::uint64_t> || std::is_same_v<T, int>)
                return std::to_string(value);
            else
                return optim::format_number(value);
        },
        field.member);
}

}  // namespace scalelab
