#include "run_comparison.h"

#include <QJsonObject>

#include <algorithm>
#include <map>
#include <set>

#include "run_spec_json.h"
#include "run_summary.h"

namespace scalelab {

namespace {

// The spec's config without the keys a scaling experiment varies.
QJsonObject configuration_without_devices(const RunSpec& spec) {
    QJsonObject json = run_spec_to_json(spec);
    json.remove(QStringLiteral("devices"));
    json.remove(QStringLiteral("threads"));
    return json;
}

double mean(const std::vector<double>& values) {
    double sum = 0;
    for (double value : values)
        sum += value;
    return sum / double(values.size());
}

}  // namespace

bool differs_only_in_devices(const RunSpec& a, const RunSpec& b) {
    return configuration_without_devices(a) == configuration_without_devices(b);
}

std::optional<double> scaling_efficiency(const RunCollection& runs, int id) {
    const RunRecord* run = runs.find(id);
    if (run == nullptr || run->spec.devices <= 1)
        return std::nullopt;
    const std::optional<double> images_per_s = run->mean_images_per_s();
    if (!images_per_s)
        return std::nullopt;
    std::vector<double> single_device;
    for (int other_id : runs.ids()) {
        const RunRecord* other = runs.find(other_id);
        if (other->spec.devices != 1 || !differs_only_in_devices(other->spec, run->spec))
            continue;
        if (const std::optional<double> other_images_per_s = other->mean_images_per_s())
            single_device.push_back(*other_images_per_s);
    }
    if (single_device.empty())
        return std::nullopt;
    return *images_per_s / (double(run->spec.devices) * mean(single_device));
}

double ideal_images_per_s(const ScalingGroup& group, int devices) {
    return group.base_images_per_s * double(devices) / double(group.base_devices);
}

std::vector<ScalingGroup> scaling_groups(const RunCollection& runs) {
    struct Candidate {
        QJsonObject configuration;
        const RunRecord* first = nullptr;
        std::vector<ScalingPoint> points;
    };
    std::vector<Candidate> candidates;
    for (int id : runs.ids()) {
        const RunRecord* run = runs.find(id);
        const std::optional<double> images_per_s = run->mean_images_per_s();
        if (!images_per_s)
            continue;
        const QJsonObject configuration = configuration_without_devices(run->spec);
        auto candidate =
            std::find_if(candidates.begin(), candidates.end(),
                         [&](const Candidate& c) { return c.configuration == configuration; });
        if (candidate == candidates.end())
            candidate = candidates.insert(candidates.end(), Candidate{configuration, run, {}});
        candidate->points.push_back(ScalingPoint{run->spec.devices, *images_per_s, id, 0.0});
    }

    std::vector<ScalingGroup> groups;
    for (Candidate& candidate : candidates) {
        std::vector<ScalingPoint>& points = candidate.points;
        std::set<int> device_counts;
        for (const ScalingPoint& point : points)
            device_counts.insert(point.devices);
        if (device_counts.size() < 2)
            continue;
        std::sort(points.begin(), points.end(), [](const ScalingPoint& a, const ScalingPoint& b) {
            return a.devices != b.devices ? a.devices < b.devices : a.run_id < b.run_id;
        });
        ScalingGroup group;
        group.label = configuration_summary(candidate.first->spec, DeviceDetail::Omitted);
        group.base_devices = points.front().devices;
        std::vector<double> base;
        for (const ScalingPoint& point : points)
            if (point.devices == group.base_devices)
                base.push_back(point.images_per_s);
        group.base_images_per_s = mean(base);
        for (ScalingPoint& point : points)
            point.efficiency = point.images_per_s / ideal_images_per_s(group, point.devices);
        group.points = std::move(points);
        groups.push_back(std::move(group));
    }

    // Configurations that differ only in settings the summary leaves out (seed, momentum...)
    // would share a label; number the repeats so that a legend can tell them apart.
    std::map<QString, int> seen;
    for (ScalingGroup& group : groups) {
        const int repeat = ++seen[group.label];
        if (repeat > 1)
            group.label += QStringLiteral(" (%1)").arg(repeat);
    }
    return groups;
}

}  // namespace scalelab
