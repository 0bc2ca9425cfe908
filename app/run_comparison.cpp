#include "run_comparison.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <map>

#include "run_group.h"
#include "run_spec_json.h"
#include "run_summary.h"

namespace scalelab {

namespace {

// The spec's config without the keys a scaling experiment may vary.
QJsonObject configuration_without_devices(const RunSpec& spec) {
    QJsonObject json = run_spec_to_json(spec);
    for (const char* key : {"devices", "threads", "seed"})
        json.remove(QLatin1String(key));
    return json;
}

bool shares_cores(const RunRecord& run) {
    return run.spec.device == DeviceKind::Cpu && run.spec.threads == 0;
}

// The threads a 1-device baseline of `run` must have (CPU devices; unused on GPUs): the run's
// threads per device, or, when its devices share the cores, the cores they use in total.
int baseline_threads(const RunRecord& run) {
    if (!shares_cores(run))
        return run.info.threads_per_device;
    return std::min(run.info.devices * run.info.threads_per_device, run.info.cores);
}

// The ideal images/s of `run` over its baseline's: devices × for fixed units, 1 for devices that
// divide the baseline's cores among them.
double ideal_factor(const RunRecord& run) {
    return shares_cores(run) ? 1.0 : double(run.spec.devices);
}

// Whether `candidate` can be the baseline of the multi-device `run`: one device, images/s, the
// same configuration and, on CPUs, the same machine size and the threads baseline_threads() asks.
bool is_baseline_for(const RunRecord& candidate, const RunRecord& run) {
    if (candidate.spec.devices != 1 || !candidate.started || !candidate.mean_images_per_s() ||
        !differs_only_in_devices(candidate.spec, run.spec))
        return false;
    if (run.spec.device == DeviceKind::Gpu)
        return true;
    return candidate.info.cores == run.info.cores &&
           candidate.info.threads_per_device == baseline_threads(run);
}

QString plural(int count, const char* one, const char* many) {
    return QStringLiteral("%1 %2").arg(count).arg(QLatin1String(count == 1 ? one : many));
}

// "1 device × 2 threads", the compute a 1-device baseline of `run` has.
QString baseline_unit_text(const RunRecord& run) {
    if (run.spec.device == DeviceKind::Gpu)
        return QStringLiteral("1 GPU");
    return QStringLiteral("1 device × %1").arg(plural(baseline_threads(run), "thread", "threads"));
}

QString no_baseline_text(const RunCollection& runs, const RunRecord& run) {
    QString text =
        QStringLiteral("no 1-device run to compare with: run the same configuration on %1")
            .arg(baseline_unit_text(run));
    if (shares_cores(run))
        text += QStringLiteral(" (the same cores in total)");
    for (auto it = runs.ids().rbegin(); it != runs.ids().rend(); ++it)
        if (const RunRecord* hidden = runs.find(*it);
            !hidden->visible && is_baseline_for(*hidden, run))
            return text + QStringLiteral(", or show “%1” on the charts").arg(hidden->name);
    return text;
}

// The runs other programs did not disturb, or all of them when every one was.
std::vector<const RunRecord*> undisturbed_if_any(std::vector<const RunRecord*> found) {
    std::vector<const RunRecord*> undisturbed;
    for (const RunRecord* run : found)
        if (!run->disturbed())
            undisturbed.push_back(run);
    return undisturbed.empty() ? found : undisturbed;
}

// The shown runs that can be the baseline of `run`, oldest first.
std::vector<const RunRecord*> baselines_of(const RunCollection& runs, const RunRecord& run) {
    std::vector<const RunRecord*> found;
    for (int id : runs.ids())
        if (const RunRecord* candidate = runs.find(id);
            candidate->visible && is_baseline_for(*candidate, run))
            found.push_back(candidate);
    return found;
}

const RunRecord* choose_baseline(const RunCollection& runs, const RunRecord& run) {
    if (const RunRecord* chosen = runs.find(runs.baseline());
        chosen != nullptr && is_baseline_for(*chosen, run))
        return chosen;
    const std::vector<const RunRecord*> found = undisturbed_if_any(baselines_of(runs, run));
    return found.empty() ? nullptr : found.back();
}

}  // namespace

bool differs_only_in_devices(const RunSpec& a, const RunSpec& b) {
    return configuration_without_devices(a) == configuration_without_devices(b);
}

bool same_device_unit(const RunRecord& a, const RunRecord& b) {
    if (a.spec.device != b.spec.device)
        return false;
    return a.spec.device == DeviceKind::Gpu ||
           (a.info.threads_per_device == b.info.threads_per_device && a.info.cores == b.info.cores);
}

std::optional<ScalingEfficiency> scaling_efficiency(const RunCollection& runs, int id) {
    const RunRecord* run = runs.find(id);
    if (run == nullptr || run->spec.devices <= 1 || !run->started)
        return std::nullopt;
    const std::optional<double> images_per_s = run->mean_images_per_s();
    if (!images_per_s)
        return std::nullopt;
    ScalingEfficiency result;
    result.same_total_cores = shares_cores(*run);
    const RunRecord* baseline = choose_baseline(runs, *run);
    if (baseline == nullptr) {
        result.explanation = no_baseline_text(runs, *run);
        return result;
    }
    const double baseline_images_per_s = *baseline->mean_images_per_s();
    result.baseline_id = baseline->id;
    result.ideal_images_per_s = ideal_factor(*run) * baseline_images_per_s;
    result.value = *images_per_s / result.ideal_images_per_s;
    const QString factor =
        result.same_total_cores ? QString() : QStringLiteral("%1 × ").arg(run->spec.devices);
    result.explanation =
        QStringLiteral("%1 images/s against %2%3 of “%4” (%5%6)")
            .arg(whole_number_text(*images_per_s), factor, whole_number_text(baseline_images_per_s),
                 baseline->name, baseline_unit_text(*run),
                 result.same_total_cores ? QStringLiteral(", the same cores in total") : QString());
    if (baseline->disturbed())
        result.explanation +=
            QStringLiteral(
                "; other programs used %1% of the cores during “%2”, so this figure "
                "may be too high")
                .arg(std::lround(*baseline->other_programs_share() * 100.0))
                .arg(baseline->name);
    return result;
}

std::vector<ScalingGroup> scaling_groups(const RunCollection& runs) {
    // Multi-device runs by configuration and compute unit, then by device count.
    struct Candidate {
        QJsonObject configuration;
        bool shared = false;
        int threads_per_device = 0;
        int cores = 0;
        std::map<int, std::vector<const RunRecord*>> by_devices;
    };
    std::vector<Candidate> candidates;
    for (int id : runs.ids()) {
        const RunRecord* run = runs.find(id);
        if (!run->visible || !run->started || run->spec.devices < 2 || !run->mean_images_per_s())
            continue;
        Candidate key{configuration_without_devices(run->spec),
                      shares_cores(*run),
                      shares_cores(*run) ? 0 : run->info.threads_per_device,
                      run->info.cores,
                      {}};
        if (run->spec.device == DeviceKind::Gpu)
            key.threads_per_device = key.cores = 0;
        auto candidate =
            std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) {
                return c.configuration == key.configuration && c.shared == key.shared &&
                       c.threads_per_device == key.threads_per_device && c.cores == key.cores;
            });
        if (candidate == candidates.end())
            candidate = candidates.insert(candidates.end(), std::move(key));
        candidate->by_devices[run->spec.devices].push_back(run);
    }

    const auto point_of = [&](int devices, const std::vector<const RunRecord*>& members) {
        ScalingPoint point;
        point.devices = devices;
        std::vector<double> images_per_s;
        for (const RunRecord* member : members) {
            point.run_ids.push_back(member->id);
            images_per_s.push_back(*member->mean_images_per_s());
        }
        const Spread spread = *spread_of(images_per_s);
        point.images_per_s = spread.mean;
        point.stddev_images_per_s = spread.stddev;
        point.min_images_per_s = spread.min;
        point.max_images_per_s = spread.max;
        point.disturbed = members.front()->disturbed();  // all of them, or none
        return point;
    };

    std::vector<ScalingGroup> groups;
    for (const Candidate& candidate : candidates) {
        const RunRecord& first = *candidate.by_devices.begin()->second.front();
        ScalingGroup group;
        group.label = configuration_summary(first.spec, DeviceDetail::Omitted);
        if (const auto base = undisturbed_if_any(baselines_of(runs, first)); !base.empty())
            group.points.push_back(point_of(1, base));
        for (const auto& [devices, all_members] : candidate.by_devices) {
            const std::vector<const RunRecord*> members = undisturbed_if_any(all_members);
            ScalingPoint point = point_of(devices, members);
            if (const auto base = undisturbed_if_any(baselines_of(runs, *members.front()));
                !base.empty()) {
                point.ideal_images_per_s =
                    ideal_factor(*members.front()) * point_of(1, base).images_per_s;
                point.efficiency = point.images_per_s / *point.ideal_images_per_s;
            }
            group.points.push_back(std::move(point));
        }
        if (group.points.size() < 2)
            continue;
        if (group.has_baseline()) {
            group.points.front().ideal_images_per_s = group.points.front().images_per_s;
            group.points.front().efficiency = 1.0;
        }
        groups.push_back(std::move(group));
    }

    // Configurations that differ only in settings the summary leaves out (momentum, ...) would
    // share a label; number the repeats so that a legend can tell them apart.
    std::map<QString, int> seen;
    for (ScalingGroup& group : groups) {
        const int repeat = ++seen[group.label];
        if (repeat > 1)
            group.label += QStringLiteral(" (%1)").arg(repeat);
    }
    return groups;
}

}  // namespace scalelab
