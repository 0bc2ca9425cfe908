#include "pytorch_export.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>

#include <utility>

#include "run_spec_json.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

// The parts of train_ddp.py, in order: each defines what the next ones use.
constexpr const char* script_parts[] = {
    ":/pytorch/scalelab_order.py",  ":/pytorch/scalelab_data.py",  ":/pytorch/scalelab_lr.py",
    ":/pytorch/scalelab_models.py", ":/pytorch/scalelab_optim.py", ":/pytorch/train_ddp_main.py"};

QString resource_text(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// A module of resources/pytorch/ without its docstring and its imports: train_ddp.py imports
// everything once at its top.
QString module_body(const QString& text) {
    QString body = text;
    if (body.startsWith(QLatin1String("\"\"\""))) {
        const qsizetype end = body.indexOf(QLatin1String("\"\"\""), 3);
        body = body.mid(body.indexOf(QLatin1Char('\n'), end) + 1);
    }
    QStringList kept;
    for (const QString& line : body.split(QLatin1Char('\n')))
        if (!line.startsWith(QLatin1String("import ")) && !line.startsWith(QLatin1String("from ")))
            kept.append(line);
    return kept.join(QLatin1Char('\n')).trimmed() + QStringLiteral("\n");
}

QString script(const RunSpec& spec) {
    QString text =
        QStringLiteral(
            "#!/usr/bin/env python3\n"
            "\"\"\"%1 on %2, %3 x batch %4, in PyTorch DistributedDataParallel\n"
            "\n"
            "A ScaleLab experiment, written by scalelab-cli export pytorch. It reads "
            "experiment.json beside\n"
            "it, visits the samples in ScaleLab's order, feeds them as ScaleLab does, builds its "
            "model and\n"
            "optimizer and follows its learning-rate rules, so that, started from the same "
            "weights (--initial,\n"
            "from scalelab-cli train --save-initial), its losses follow ScaleLab's.\n"
            "Start it with ./launch.sh (this machine) or sbatch job.sbatch (a Slurm "
            "cluster); README.md.\n"
            "\"\"\"\n"
            "import argparse\nimport bisect\nimport contextlib\nimport datetime\nimport gzip\n"
            "import ipaddress\nimport json\nimport math\n"
            "import os\nimport socket\nimport sys\nimport time\n\nimport numpy as np\n"
            "import torch\n"
            "import torch.distributed as dist\nfrom torch import nn\n")
            .arg(QString::fromStdString(spec.model), QString::fromStdString(spec.dataset))
            .arg(spec.devices)
            .arg(spec.batch);
    for (const char* part : script_parts)
        text += QStringLiteral("\n\n") + module_body(resource_text(QString::fromLatin1(part)));
    return text;
}

// The experiment's GPUs (its gpus field) as the processes' CUDA_VISIBLE_DEVICES: process r
// takes the r-th of them. Nothing where it names none (the first GPUs) or runs on the CPU.
QString visible_gpus(const RunSpec& spec) {
    if (spec.device != DeviceKind::Gpu || spec.gpus.empty())
        return {};
    QStringList indices;
    for (const int gpu : spec.gpus)
        indices.append(QString::number(gpu));
    return QStringLiteral("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-%1}\n")
        .arg(indices.join(QLatin1Char(',')));
}

QString launch_script(const RunSpec& spec) {
    return QStringLiteral(
               "#!/usr/bin/env bash\n"
               "# The experiment's %1 processes on this machine (gloo between CPU processes, NCCL "
               "between GPUs),\n"
               "# started with the environment DistributedDataParallel reads, as torchrun would "
               "(Debian 12's own\n"
               "# torchrun fails on its Python 3.11). Usage: ./launch.sh [train_ddp.py flags],\n"
               "# e.g. ./launch.sh --initial initial.npz --metrics-out pytorch.jsonl\n"
               "set -euo pipefail\n"
               "cd \"$(dirname \"$0\")\"\n"
               "processes=${PROCESSES:-%1}\n"
               "%2"
               "export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} MASTER_PORT=${MASTER_PORT:-29500} "
               "WORLD_SIZE=$processes \\\n"
               "    LOCAL_WORLD_SIZE=$processes\n"
               "pids=()\n"
               "for ((rank = 0; rank < processes; rank++)); do\n"
               "    RANK=$rank LOCAL_RANK=$rank \"${PYTHON:-python3}\" train_ddp.py \"$@\" &\n"
               "    pids+=($!)\n"
               "done\n"
               "status=0\n"
               "for pid in \"${pids[@]}\"; do wait \"$pid\" || status=$?; done\n"
               "exit $status\n")
        .arg(spec.devices)
        .arg(visible_gpus(spec));
}

QString job_script(const RunSpec& spec) {
    const bool gpus = spec.device == DeviceKind::Gpu;
    return QStringLiteral(
               "#!/usr/bin/env bash\n"
               "# The experiment on a Slurm cluster: torchrun on each node starts %1 processes "
               "(%2), and\n"
               "# they meet through torchrun's c10d rendezvous on the first node. Submit from this "
               "folder: sbatch job.sbatch\n"
               "#SBATCH --job-name=scalelab-pytorch\n"
               "#SBATCH --nodes=2\n"
               "#SBATCH --ntasks-per-node=1\n"
               "#SBATCH --cpus-per-task=%3\n"
               "%4"
               "#SBATCH --output=pytorch-%j.out\n"
               "set -euo pipefail\n"
               "head=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
               "srun torchrun --nnodes=\"$SLURM_NNODES\" --nproc_per_node=%1 "
               "--rdzv_id=\"$SLURM_JOB_ID\" \\\n"
               "    --rdzv_backend=c10d --rdzv_endpoint=\"$head:29500\" train_ddp.py "
               "--metrics-out \"pytorch-$SLURM_JOB_ID.jsonl\"\n")
        .arg(spec.devices)
        .arg(gpus ? QStringLiteral("one per GPU") : QStringLiteral("CPU processes"))
        .arg(gpus ? spec.devices : spec.devices * std::max(1, spec.threads))
        .arg(gpus ? QStringLiteral("#SBATCH --gpus-per-node=%1\n").arg(spec.devices) : QString());
}

// What a reader of the folder should know the script does otherwise than ScaleLab: always the
// measurements it leaves out, and the experiment's pytorch_export_warnings.
QString differences(const RunSpec& spec) {
    QString text = QStringLiteral(
        "## What differs from ScaleLab\n\n"
        "- The script measures loss, accuracy and images/s, not the gradient noise scale or the "
        "time breakdown of a step.\n");
    for (const QString& warning : pytorch_export_warnings(spec))
        text += QStringLiteral("- %1\n").arg(warning);
    return text;
}

QString readme(const RunSpec& spec) {
    return QStringLiteral(
               "# %1 on %2, carried to PyTorch\n\n"
               "Written by `scalelab-cli export pytorch`. Needs PyTorch 1.13 or newer and NumPy "
               "(Debian 12: `apt install python3-torch python3-numpy`) and the dataset's files "
               "(none for the synthetic dataset, which the script generates as ScaleLab "
               "does).\n\n"
               "```sh\n"
               "./launch.sh                                  # %3 processes on this machine\n"
               "./launch.sh --data DIR --metrics-out pytorch.jsonl --steps 100\n"
               "sbatch job.sbatch                            # 2 nodes x %3 processes\n"
               "```\n\n"
               "To follow a ScaleLab run step by step, start both from the same weights:\n\n"
               "```sh\n"
               "scalelab-cli train --config experiment.json --save-initial initial.npz "
               "--metrics-out scalelab.jsonl\n"
               "./launch.sh --initial initial.npz --metrics-out pytorch.jsonl\n"
               "```\n\n"
               "`train_ddp.py --help` lists its flags; `experiment.json` is the experiment "
               "(ScaleLab's JSON config).\n\n%4")
        .arg(QString::fromStdString(spec.model), QString::fromStdString(spec.dataset))
        .arg(spec.devices)
        .arg(differences(spec));
}

}  // namespace

QStringList pytorch_export_problems(const RunSpec& spec) {
    QStringList problems;
    if (spec.sync_bn && spec.device != DeviceKind::Gpu)
        problems.append(QStringLiteral(
            "sync_bn: PyTorch's SyncBatchNorm runs on GPUs only (NCCL), not between CPU "
            "processes: turn sync_bn off or run on GPUs"));
    return problems;
}

QStringList pytorch_export_warnings(const RunSpec& spec) {
    QStringList warnings;
    if (!spec.overlap)
        warnings.append(QStringLiteral(
            "overlap: DDP always all-reduces each bucket while backward goes on; the script "
            "cannot turn that off"));
    if (spec.first_bucket_mb != RunSpec{}.first_bucket_mb)
        warnings.append(QStringLiteral("first_bucket_mb: DDP's first bucket is fixed at 1 MiB; "
                                       "the script keeps it, not %1 MiB")
                            .arg(spec.first_bucket_mb));
    if (spec.model == "wrn")
        warnings.append(QStringLiteral(
            "model: wrn's dropout draws PyTorch's own masks, so the two runs agree in "
            "distribution, not step by step"));
    return warnings;
}

bool write_pytorch_export(const RunSpec& spec, const QString& folder, QString* error) {
    if (const QStringList problems = pytorch_export_problems(spec); !problems.isEmpty()) {
        *error = problems.join(QLatin1Char('\n'));
        return false;
    }
    if (!QDir().mkpath(folder)) {
        *error = QStringLiteral("Cannot make the folder %1. Choose another.")
                     .arg(QDir::toNativeSeparators(folder));
        return false;
    }
    const QDir dir(folder);
    const std::pair<QString, QString> files[] = {
        {QStringLiteral("train_ddp.py"), script(spec)},
        {QStringLiteral("experiment.json"),
         QString::fromUtf8(QJsonDocument(run_spec_to_json(spec)).toJson(QJsonDocument::Indented))},
        {QStringLiteral("launch.sh"), launch_script(spec)},
        {QStringLiteral("job.sbatch"), job_script(spec)},
        {QStringLiteral("README.md"), readme(spec)}};
    for (const auto& [name, text] : files) {
        const QString path = dir.filePath(name);
        const QByteArray bytes = text.toUtf8();
        const QString reason = write_whole_file(
            path, [&bytes](QIODevice& out) { return out.write(bytes) == bytes.size(); });
        if (!reason.isEmpty()) {
            *error = cannot_write_message(path, reason);
            return false;
        }
    }
    for (const char* program : {"train_ddp.py", "launch.sh"})
        QFile::setPermissions(dir.filePath(QLatin1String(program)),
                              QFile::permissions(dir.filePath(QLatin1String(program))) |
                                  QFileDevice::ExeOwner | QFileDevice::ExeGroup |
                                  QFileDevice::ExeOther);
    return true;
}

}  // namespace scalelab
