#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "name_table.h"

namespace scalelab {

enum class ScheduleKind { Constant, Step, MultiStep, Cosine, Poly, Exp };
enum class WarmupUnit { Epochs, Steps };
// gradual: per step, linear from the start factor to 1 (Goyal et al.); per_epoch: the same
// ramp stepped once per epoch (the course's); constant: the start factor, then a jump to 1.
enum class WarmupKind { Gradual, PerEpoch, Constant };
enum class OptimizerKind { Sgd, Lars, Lamb, NovoGrad, AdamW };
// Effective base lr = lr * rule(global batch / reference_batch): none 1, linear k, sqrt sqrt(k).
enum class LrScaling { None, Linear, Sqrt };
// none; flip (horizontal); crop_flip (random crop with zero padding 4, then flip: CIFAR-10);
// assessment (the course's: flip, rotation up to 10 degrees, shear 10, scale 0.8-1.2, colour
// jitter 0.2).
enum class Augmentation { None, Flip, CropFlip, Assessment };
// What a run's devices are: worker threads on the CPU's cores, or GPUs.
enum class DeviceKind { Cpu, Gpu };

// Everything that defines a training run. Plain data: the app layer maps it to and from JSON,
// the CLI maps flags onto it, and validate() is the one place that decides what is allowed.
struct RunSpec {
    // What to train.
    std::string model = "cnn";  // mlp, cnn, resnet8, resnet20, wrn
    int width = 10;             // wrn's widening factor k

    // On what. data_dir empty: the dataset's default folder (Fashion-MNIST's Debian package).
    std::string dataset = "fashion-mnist";  // fashion-mnist, mnist, cifar10, synthetic
    std::string data_dir;
    int synthetic_train = 8192;  // synthetic dataset sizes and image geometry
    int synthetic_test = 2048;
    int synthetic_channels = 1;
    int synthetic_size = 28;
    Augmentation augment = Augmentation::None;  // seeded per device and epoch
    // Quick runs (lessons, classroom demos) train and evaluate on the first N images of each set;
    // 0: the whole set. More than the set holds is an error, not a silent clamp.
    int train_subset = 0;
    int test_subset = 0;

    // How long, and with which batch.
    int epochs = 2;
    int batch =
        128;  // per device and micro-batch: the global batch is devices * batch * accumulation

    // Data parallelism (DDP semantics): one worker thread per device, gradients averaged over
    // the global batch by an all-reduce of contiguous buckets of the flat gradient buffer.
    DeviceKind device = DeviceKind::Cpu;
    int devices = 1;  // 1 to 16 CPU devices or GPUs
    // With GPUs, which ones (CUDA indices, one device each, as many as `devices`); empty: the
    // first `devices` GPUs of the machine.
    std::vector<int> gpus;
    bool tf32 = false;           // GPUs: TF32 tensor-core math in convolutions and matrix products
    bool deterministic = false;  // GPUs: only algorithms that give the same bits on every run
    // GPUs: a collective still unfinished after this long (a GPU that hangs, a rank that never
    // joins) makes the watchdog stop every GPU's collectives and end the run with the reason.
    double collective_timeout_s = 300;
    int accumulation = 1;             // micro-batches per step; no communication until the last
    double bucket_mb = 25.0;          // bucket cap, as DDP's bucket_cap_mb
    double first_bucket_mb = 1.0;     // the first bucket (the last layers' gradients) is smaller
    bool overlap = true;              // all-reduce each bucket while backward goes on
    bool sync_bn = false;             // batch-norm statistics over the global batch, not per device
    bool zero_init_residual = false;  // gamma of each residual block's last BN starts at 0
    int ghost_batch = 0;  // batch-norm statistics over virtual batches of this size (0: off)

    // Measurements: the gradient noise scale's exponential-average decay, and the validation
    // accuracies whose first crossing (time, step, epoch, images) each run records.
    double noise_scale_beta = 0.99;
    std::vector<double> targets{0.85, 0.90};

    // Optimiser. lr is the base learning rate before the scaling rule.
    OptimizerKind optimizer = OptimizerKind::Sgd;
    double lr = 0.05;
    LrScaling lr_scaling = LrScaling::None;
    int reference_batch = 256;
    double momentum = 0.9;
    bool nesterov = false;
    double weight_decay = 0.0;
    bool decay_norm_and_bias = true;  // false: no weight decay on batch-norm and bias parameters
    double label_smoothing = 0.0;
    double beta1 = 0.9;    // Adam-family first-moment decay (LAMB, AdamW, NovoGrad)
    double beta2 = 0.999;  // second-moment decay
    double eps = 1e-8;
    double trust_coefficient = 0.001;  // LARS eta
    bool larc = false;                 // LARS: local lr clipped to the global one (LARC)
    double trust_clamp = 0.0;          // LAMB: trust ratio clamped to [0, trust_clamp]; 0: no clamp
    bool grad_averaging = false;       // NovoGrad: first moment averages (1 - beta1) g
    bool adapt_norm_and_bias = false;  // layer-wise adaptation also for BN and bias tensors

    // Learning-rate schedule, then a linear warm-up multiplied on top of it.
    ScheduleKind schedule = ScheduleKind::Constant;
    double gamma = 0.1;           // step and multistep decay factor
    int step_epochs = 30;         // step: decay every step_epochs epochs
    std::vector<int> milestones;  // multistep: decay at these epochs
    double min_lr = 0.0;          // cosine: the floor it anneals to
    double poly_power = 2.0;      // poly: lr (1 - t / T)^power; exp: lr gamma^epoch
    WarmupKind warmup = WarmupKind::Gradual;
    double warmup_length = 0.0;  // length of the warm-up, in warmup_unit (0: none)
    WarmupUnit warmup_unit = WarmupUnit::Epochs;
    double warmup_start_factor = 0.1;  // lr starts at lr * factor and rises linearly to lr

    // Reproducibility and machine.
    std::uint64_t seed = 0;
    // CPU threads per device. A CPU device is a fixed unit of compute, as a GPU is: one core by
    // default, so that 1 and N devices compare fairly (N devices have N times the cores). 0
    // shares all the cores among the devices instead (cores / devices each).
    int threads = 1;

    // Stop early once validation accuracy has been >= target for `patience` consecutive epochs
    // (the course's criterion). target_accuracy 0: train all epochs.
    double target_accuracy = 0.0;
    int patience = 1;

    // Every problem with the spec, each a sentence that says which field and what to change.
    // Empty: the spec is valid.
    std::vector<std::string> validate() const;
};

// The names in JSON, on the command line and in the window: to_string(value) and
// EnumNames<Enum>::table.parse(name) (name_table.h).
template <>
struct EnumNames<ScheduleKind> {
    static constexpr NameTable<ScheduleKind, 6> table{{{{ScheduleKind::Constant, "constant"},
                                                        {ScheduleKind::Step, "step"},
                                                        {ScheduleKind::MultiStep, "multistep"},
                                                        {ScheduleKind::Cosine, "cosine"},
                                                        {ScheduleKind::Poly, "poly"},
                                                        {ScheduleKind::Exp, "exp"}}}};
};
template <>
struct EnumNames<WarmupUnit> {
    static constexpr NameTable<WarmupUnit, 2> table{
        {{{WarmupUnit::Epochs, "epochs"}, {WarmupUnit::Steps, "steps"}}}};
};
template <>
struct EnumNames<WarmupKind> {
    static constexpr NameTable<WarmupKind, 3> table{{{{WarmupKind::Gradual, "gradual"},
                                                      {WarmupKind::PerEpoch, "per-epoch"},
                                                      {WarmupKind::Constant, "constant"}}}};
};
template <>
struct EnumNames<OptimizerKind> {
    static constexpr NameTable<OptimizerKind, 5> table{{{{OptimizerKind::Sgd, "sgd"},
                                                         {OptimizerKind::Lars, "lars"},
                                                         {OptimizerKind::Lamb, "lamb"},
                                                         {OptimizerKind::NovoGrad, "novograd"},
                                                         {OptimizerKind::AdamW, "adamw"}}}};
};
template <>
struct EnumNames<LrScaling> {
    static constexpr NameTable<LrScaling, 3> table{
        {{{LrScaling::None, "none"}, {LrScaling::Linear, "linear"}, {LrScaling::Sqrt, "sqrt"}}}};
};
template <>
struct EnumNames<Augmentation> {
    static constexpr NameTable<Augmentation, 4> table{{{{Augmentation::None, "none"},
                                                        {Augmentation::Flip, "flip"},
                                                        {Augmentation::CropFlip, "crop-flip"},
                                                        {Augmentation::Assessment, "assessment"}}}};
};
template <>
struct EnumNames<DeviceKind> {
    static constexpr NameTable<DeviceKind, 2> table{
        {{{DeviceKind::Cpu, "cpu"}, {DeviceKind::Gpu, "gpu"}}}};
};

// The base lr times the scaling rule for this spec's global batch.
double effective_lr(const RunSpec& spec);

// The most CPU devices a run may have (threads with their own replica).
inline constexpr int max_cpu_devices = 16;

// The names validate() accepts, for help texts and messages.
const std::vector<std::string>& model_names();
const std::vector<std::string>& dataset_names();

}  // namespace scalelab
