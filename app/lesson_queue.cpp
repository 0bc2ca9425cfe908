#include "lesson_queue.h"

#include "repeats.h"
#include "run_collection.h"

namespace scalelab {

LessonRunIds queue_lesson(RunCollection& runs, const Lesson& lesson, const QString& prefix,
                          std::optional<std::uint64_t> seed) {
    std::vector<RunSpec> specs;
    std::vector<QString> names, groups;
    for (const LessonRun& run : lesson.runs) {
        RunSpec first = run.spec;
        if (seed)
            first.seed = *seed;
        const QString group = run.repeats > 1 ? new_group_id() : QString();
        for (RunSpec& spec : repeat_specs(first, run.repeats)) {
            names.push_back(prefix + lesson_member_name(run, spec.seed));
            groups.push_back(group);
            specs.push_back(std::move(spec));
        }
    }
    // One enqueue for all: the lesson's runs train one after another, in lesson order.
    const std::vector<int> queued = runs.enqueue(specs, names, groups);
    LessonRunIds ids;
    std::size_t next = 0;
    for (const LessonRun& run : lesson.runs) {
        std::vector<int>& members = ids.emplace_back();
        for (int i = 0; i < run.repeats && next < queued.size(); ++i)
            members.push_back(queued[next++]);
    }
    return ids;
}

QString lesson_member_name(const LessonRun& run, std::uint64_t seed) {
    return repeat_name(run.name, seed, run.repeats);
}

std::vector<int> all_runs(const LessonRunIds& ids) {
    std::vector<int> all;
    for (const std::vector<int>& members : ids)
        all.insert(all.end(), members.begin(), members.end());
    return all;
}

}  // namespace scalelab
