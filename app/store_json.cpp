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

namespace {

// A count JSON holds as a double; 0 where the value is none (negative, beyond 2^53, where whole
// numbers stop being exact, or not a number): a store or a file may say anything.
std::size_t count_from_json(const QJsonValue& value) {
    constexpr double largest_exact = 9007199254740992.0;  // 2^53
    const double number = value.toDouble(0);
    return number >= 0 && number <= largest_exact ? std::size_t(number) : 0;
}

}  // namespace

RunInfo run_info_from_json(const QJsonObject& object) {
    RunInfo info;
    info.devices = object.value("devices").toInt(info.devices);
    info.threads_per_device = object.value("threads_per_device").toInt(info.threads_per_device);
    info.cores = object.value("cores").toInt(info.cores);
    info.global_batch = object.value("global_batch").toInt(info.global_batch);
    info.steps_per_epoch = object.value("steps_per_epoch").toInt(info.steps_per_epoch);
    info.parameters = count_from_json(object.value("parameters"));
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
