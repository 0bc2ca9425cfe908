#include "cluster_job.h"

#include <QFileInfo>
#include <QJsonDocument>

#include <utility>

#include "run_spec_json.h"
#include "whole_file_writer.h"

namespace scalelab {

QString cluster_job_problem(const RunSpec& spec, const ClusterJob& job) {
    if (job.nodes < 1)
        return QStringLiteral("a cluster job needs at least 1 node (got %1)").arg(job.nodes);
    if (job.cpus_per_node < spec.devices)
        return QStringLiteral(
                   "%1 cores per node cannot give each of the %2 devices a core: "
                   "ask for at least %2")
            .arg(job.cpus_per_node)
            .arg(spec.devices);
    return {};
}

QString cluster_job_script(const RunSpec& spec, const ClusterJob& job, const QString& config_name) {
    const bool gpus = spec.device == DeviceKind::Gpu;
    // CPU devices share the task's cores; a GPU run's host threads need no count.
    const QString threads =
        gpus ? QString() : QStringLiteral(" --threads %1").arg(job.cpus_per_node / spec.devices);
    return QStringLiteral(
               "#!/usr/bin/env bash\n"
               "# Written by ScaleLab (File > Export cluster job...): %1 nodes x %2 %6, "
               "one run.\n"
               "# Submit beside %3 from a folder every node sees: sbatch <this file>\n"
               "#SBATCH --job-name=scalelab\n"
               "#SBATCH --nodes=%1\n"
               "#SBATCH --ntasks-per-node=1\n"
               "#SBATCH --cpus-per-task=%4\n"
               "%7"
               "#SBATCH --output=scalelab-%j.out\n"
               "set -euo pipefail\n"
               "CLI=${CLI:-scalelab-cli}\n"
               "STORE=$PWD/scalelab-$SLURM_JOB_ID.sqlite\n"
               "args=(train --config \"%3\"%5 --store \"$STORE\")\n"
               "# srun starts the processes where Slurm has PMIx, mpirun inside the allocation "
               "otherwise.\n"
               "if srun --mpi=list 2>/dev/null | grep -q pmix; then\n"
               "    srun --mpi=pmix \"$CLI\" \"${args[@]}\"\n"
               "else\n"
               "    mpirun --map-by ppr:1:node --bind-to none \"$CLI\" \"${args[@]}\"\n"
               "fi\n"
               "echo \"copy $STORE back, then: scalelab-cli runs import $(basename \"$STORE\")\"\n")
        .arg(job.nodes)
        .arg(spec.devices)
        .arg(config_name)
        .arg(job.cpus_per_node)
        .arg(threads)
        .arg(gpus ? QStringLiteral("GPUs") : QStringLiteral("CPU devices"))
        .arg(gpus ? QStringLiteral("#SBATCH --gpus-per-node=%1\n").arg(spec.devices) : QString());
}

bool write_cluster_job(const RunSpec& spec, const ClusterJob& job, const QString& sbatch_path,
                       QString* error) {
    const QString problem = cluster_job_problem(spec, job);
    if (!problem.isEmpty()) {
        *error = problem;
        return false;
    }
    const QFileInfo script(sbatch_path);
    const QString config_path = script.dir().filePath(script.completeBaseName() + ".json");
    // Each node trains on the first GPUs Slurm gives it, whichever this machine's were.
    RunSpec exported = spec;
    exported.gpus.clear();
    const QByteArray config =
        QJsonDocument(run_spec_to_json(exported)).toJson(QJsonDocument::Indented);
    const QByteArray text =
        cluster_job_script(spec, job, QFileInfo(config_path).fileName()).toUtf8();
    const std::pair<QString, QByteArray> files[] = {{config_path, config}, {sbatch_path, text}};
    for (const auto& file : files) {
        const QByteArray& bytes = file.second;
        const QString reason = write_whole_file(
            file.first, [&bytes](QIODevice& out) { return out.write(bytes) == bytes.size(); });
        if (!reason.isEmpty()) {
            *error = cannot_write_message(file.first, reason);
            return false;
        }
    }
    return true;
}

}  // namespace scalelab
