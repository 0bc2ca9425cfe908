#include "store_json.h"

#include <QJsonValue>

namespace scalelab {

QJsonObject run_info_to_json(const RunInfo& info) {
    QJsonArray warnings;
    for (const std::string& warning : info.warnings)
        warnings.append(QString::fromStdString(warning));
    return {{"devices", info.devices},
            {"threads_per_device", info.threads_per_device},
            {"cores", info.cores},
            {"global_batch", info.global_batch},
            {"steps_per_epoch", info.steps_per_epoch},
            {"parameters", double(info.parameters)},
            {"warnings", warnings}};
}

RunInfo run_info_from_json(const QJsonObject& object) {
    RunInfo info;
    info.devices = object.value("devices").toInt(info.devices);
    info.threads_per_device = object.value("threads_per_device").toInt(info.threads_per_device);
    info.cores = object.value("cores").toInt(info.cores);
    info.global_batch = object.value("global_batch").toInt(info.global_batch);
    info.steps_per_epoch = object.value("steps_per_epoch").toInt(info.steps_per_epoch);
    info.parameters = std::size_t(object.value("parameters").toDouble(0));
    for (const QJsonValue& warning : object.value("warnings").toArray())
        info.warnings.push_back(warning.toString().toStdString());
    return info;
}

QJsonObject target_to_json(const TargetReached& reached) {
    return {{"target", reached.target},
            {"seconds", reached.seconds},
            {"step", qint64(reached.step)},
            {"epoch", reached.epoch},
            {"images", reached.images}};
}

QJsonArray targets_to_json(const std::vector<TargetReached>& targets) {
    QJsonArray array;
    for (const TargetReached& reached : targets)
        array.append(target_to_json(reached));
    return array;
}

std::vector<TargetReached> targets_from_json(const QJsonArray& array) {
    std::vector<TargetReached> targets;
    targets.reserve(std::size_t(array.size()));
    for (const QJsonValue& value : array) {
        const QJsonObject object = value.toObject();
        targets.push_back(TargetReached{.target = object.value("target").toDouble(),
                                        .seconds = object.value("seconds").toDouble(),
                                        .step = object.value("step").toInteger(),
                                        .epoch = object.value("epoch").toInt(),
                                        .images = object.value("images").toDouble()});
    }
    return targets;
}

QJsonArray tags_to_json(const QStringList& tags) {
    return QJsonArray::fromStringList(tags);
}

QStringList tags_from_json(const QJsonArray& array) {
    QStringList tags;
    for (const QJsonValue& value : array)
        tags.append(value.toString());
    return tags;
}

}  // namespace scalelab
