#include "cli/train_outputs.h"

#include <QDir>
#include <QFileInfo>
#include <QString>

#include <optional>
#include <utility>

#include "data/load.h"
#include "guarded_files.h"
#include "run_store.h"
#include "whole_file_writer.h"

namespace scalelab::cli {

namespace {

// The files the run reads or records into: the store's, the --config file and the dataset's.
std::vector<GuardedFile> read_files(const TrainOptions& options) {
    std::vector<GuardedFile> files;
    if (!options.no_store)
        files = run_store_files(options.store.empty() ? RunStore::default_path()
                                                      : QString::fromStdString(options.store));
    if (!options.config.empty())
        files.push_back(
            {QString::fromStdString(options.config), QStringLiteral("the --config file")});
    const std::string folder = options.spec.data_dir.empty()
                                   ? data::default_data_dir(options.spec.dataset)
                                   : options.spec.data_dir;
    if (!folder.empty())
        for (const QFileInfo& file :
             QDir(QString::fromStdString(folder)).entryInfoList(QDir::Files))
            files.push_back({file.filePath(), QStringLiteral("a file of the dataset")});
    return files;
}

}  // namespace

std::vector<std::string> train_output_problems(const TrainOptions& options) {
    std::vector<GuardedFile> guarded = read_files(options);
    std::vector<std::string> problems;
    for (const auto& [flag, path] : {std::pair{"--metrics-out", options.metrics_out},
                                     std::pair{"--save-initial", options.save_initial}}) {
        if (path.empty())
            continue;
        const QString output = QString::fromStdString(path);
        if (const std::optional<GuardedFile> file = guarded_file_at(output, guarded))
            problems.push_back(std::string(flag) + " " +
                               guarded_output_message(output, *file).toStdString());
        else if (const QString why = unwritable_reason(output); !why.isEmpty())
            problems.push_back(std::string(flag) + ": " +
                               cannot_write_message(output, why).toStdString());
        guarded.push_back({output, QStringLiteral("the %1 file").arg(QLatin1String(flag))});
    }
    return problems;
}

}  // namespace scalelab::cli
