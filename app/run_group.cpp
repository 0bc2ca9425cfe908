#include "run_group.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/students_t.hpp>

#include "run_summary.h"
#include "train/spec_fields.h"

namespace scalelab {

QString group_problem(const std::vector<RunSpec>& specs) {
    for (std::size_t i = 1; i < specs.size(); ++i) {
        for (const auto& [field, value] : differing_settings(specs[i], specs.front())) {
            if (field == QLatin1String("seed"))
                continue;
            const SpecField* described = find_spec_field(field.toStdString());
            return QStringLiteral(
                       "field '%1' differs between runs (%2 against %3); a group's "
                       "runs differ only in their seed")
                .arg(field, QString::fromStdString(field_value_text(*described, specs.front())),
                     QString::fromStdString(field_value_text(*described, specs[i])));
        }
    }
    return {};
}

std::optional<Spread> spread_of(const std::vector<double>& values) {
    if (values.empty())
        return std::nullopt;
    Spread spread{.count = int(values.size()), .min = values.front(), .max = values.front()};
    for (const double value : values) {
        spread.mean += value / double(values.size());
        spread.min = std::min(spread.min, value);
        spread.max = std::max(spread.max, value);
    }
    if (values.size() > 1) {
        // The sample variance, sum (x - mean)^2 / (n - 1): the members are a sample of the
        // seeds the experiment could have run with.
        double squares = 0;
        for (const double value : values)
            squares += (value - spread.mean) * (value - spread.mean);
        spread.stddev = std::sqrt(squares / double(values.size() - 1));
    }
    return spread;
}

namespace {

// Where a member ended, for GroupSummary's counts.
void count_state(GroupSummary& summary, RunState state) {
    switch (state) {
        case RunState::Finished:
        case RunState::ReachedTarget:
            ++summary.finished;
            break;
        case RunState::Queued:
        case RunState::Running:
            ++summary.active;
            break;
        case RunState::Cancelled:
        case RunState::Failed:
        case RunState::Interrupted:
            ++summary.stopped;
            break;
        case RunState::Diverged:
            ++summary.diverged;
            break;
    }
}

// When `run` reached `target`: its time_to_target() when that is to `target`, else its crossing
// of `target` among the spec.targets it reached (members share spec.targets).
std::optional<TargetReached> reached(const RunRecord& run, double target) {
    if (const std::optional<TargetReached> own = run.time_to_target(); own && own->target == target)
        return own;
    for (const TargetReached& crossing : run.targets)
        if (crossing.target == target)
            return crossing;
    return std::nullopt;
}

}  // namespace

GroupSummary group_summary(const QString& group, const std::vector<const RunRecord*>& members) {
    GroupSummary summary;
    summary.group = group;
    std::vector<double> accuracy;
    std::vector<double> images_per_s;
    for (const RunRecord* run : members) {
        summary.run_ids.push_back(run->id);
        count_state(summary, run->state);
        if (const std::optional<double> best = run->best_val_accuracy())
            accuracy.push_back(*best);
        if (const std::optional<double> images = run->mean_images_per_s())
            images_per_s.push_back(*images);
        if (const std::optional<TargetReached> own = run->time_to_target())
            summary.target =
                summary.target == 0 ? own->target : std::min(summary.target, own->target);
    }
    std::vector<double> seconds;
    std::vector<double> steps;
    for (const RunRecord* run : members)
        if (const std::optional<TargetReached> crossing = reached(*run, summary.target)) {
            seconds.push_back(crossing->seconds);
            steps.push_back(double(crossing->step));
        }
    summary.best_val_accuracy = spread_of(accuracy);
    summary.time_to_target_s = spread_of(seconds);
    summary.steps_to_target = spread_of(steps);
    summary.images_per_s = spread_of(images_per_s);
    return summary;
}

QString shared_name(const QStringList& names) {
    if (names.isEmpty())
        return {};
    const QString& first = names.front();
    qsizetype common = first.size();
    for (const QString& name : names) {
        common = std::min(common, name.size());
        common =
            qsizetype(std::mismatch(first.begin(), first.begin() + common, name.begin()).first -
                      first.begin());
    }
    // Cut back to a whole word: "run 1" and "run 12" share "run 1", which is no name of theirs.
    const auto word = [](QChar c) { return c.isLetterOrNumber(); };
    const bool mid_word = common > 0 && word(first[common - 1]) &&
                          std::any_of(names.begin(), names.end(), [&](const QString& name) {
                              return name.size() > common && word(name[common]);
                          });
    if (mid_word)
        while (common > 0 && word(first[common - 1]))
            --common;
    QString base = first.left(common);
    // Then what trails it: separators, a bracket left open and a last word "seed" ("cnn (seed",
    // "resnet8 batch 256 seed "), until nothing more goes.
    for (;;) {
        QString shorter = base.trimmed();
        if (shorter.lastIndexOf(QLatin1Char('(')) > shorter.lastIndexOf(QLatin1Char(')')))
            shorter.truncate(shorter.lastIndexOf(QLatin1Char('(')));
        while (!shorter.isEmpty() && !word(shorter.back()) && shorter.back() != u')')
            shorter.chop(1);
        if (shorter.endsWith(QLatin1String("seed"), Qt::CaseInsensitive) &&
            (shorter.size() == 4 || !word(shorter[shorter.size() - 5])))
            shorter.chop(4);
        if (shorter == base)
            break;
        base = shorter;
    }
    return base.isEmpty() ? first : base;
}

QString group_label(const std::vector<const RunRecord*>& members) {
    if (members.empty())
        return {};
    std::vector<std::uint64_t> seeds;
    for (const RunRecord* run : members)
        seeds.push_back(run->spec.seed);
    std::sort(seeds.begin(), seeds.end());
    QStringList names;
    for (const RunRecord* run : members)
        names.append(run->name);
    const QString label = shared_name(names);
    if (seeds.size() == 1)
        return QStringLiteral("%1 · seed %2").arg(label).arg(seeds.front());
    // --repeats N runs seeds seed .. seed + N - 1: a range says it all.
    if (seeds.back() - seeds.front() == seeds.size() - 1)
        return QStringLiteral("%1 · seeds %2–%3").arg(label).arg(seeds.front()).arg(seeds.back());
    return QStringLiteral("%1 · %2 seeds").arg(label).arg(seeds.size());
}

QString spread_text(const Spread& spread, int decimals, std::size_t members, const QString& unit) {
    QString text = QStringLiteral("%1 ± %2%3")
                       .arg(QString::number(spread.mean, 'f', decimals),
                            QString::number(spread.stddev, 'f', decimals), unit);
    if (std::size_t(spread.count) < members)
        text += QStringLiteral(" (%1 of %2)").arg(spread.count).arg(members);
    return text;
}

QString group_ended_text(const GroupSummary& summary) {
    const std::pair<int, const char*> counts[] = {{summary.finished, "finished"},
                                                  {summary.active, "queued or running"},
                                                  {summary.diverged, "diverged"},
                                                  {summary.stopped, "stopped"}};
    QStringList parts;
    for (const auto& [count, what] : counts)
        if (count > 0)
            parts << QStringLiteral("%1 %2").arg(count).arg(QLatin1String(what));
    const int runs = int(summary.run_ids.size());
    return QStringLiteral("%1 run%2: %3")
        .arg(runs)
        .arg(QLatin1String(runs == 1 ? "" : "s"), parts.join(QStringLiteral(", ")));
}

std::optional<WelchTest> welch_test(const Spread& a, const Spread& b) {
    if (a.count < 2 || b.count < 2 || (a.stddev == 0 && b.stddev == 0))
        return std::nullopt;
    // Each mean's squared standard error, s^2 / n.
    const double error_a = a.stddev * a.stddev / double(a.count);
    const double error_b = b.stddev * b.stddev / double(b.count);
    WelchTest test;
    test.t = (a.mean - b.mean) / std::sqrt(error_a + error_b);
    // Welch-Satterthwaite: the degrees of freedom of the t distribution that approximates t's.
    test.degrees_of_freedom =
        (error_a + error_b) * (error_a + error_b) /
        (error_a * error_a / double(a.count - 1) + error_b * error_b / double(b.count - 1));
    const boost::math::students_t distribution(test.degrees_of_freedom);
    test.p = 2.0 * boost::math::cdf(boost::math::complement(distribution, std::abs(test.t)));
    return test;
}

QString noise_note(const QString& what, const Spread& mine, const Spread& other, int decimals) {
    const std::optional<WelchTest> test = welch_test(mine, other);
    if (!test || test->p < noise_level)
        return {};
    return QStringLiteral("within seed noise: %1 %2 against %3 (Welch's t-test, p = %4)")
        .arg(what, spread_text(mine, decimals, std::size_t(mine.count)),
             spread_text(other, decimals, std::size_t(other.count)),
             QString::number(test->p, 'f', 2));
}

const GroupSummary* reference_group(const GroupSummary& mine, const std::vector<GroupSummary>& all,
                                    const QString& baseline_group) {
    const GroupSummary* best = nullptr;
    for (const GroupSummary& other : all) {
        if (other.group == mine.group || !other.best_val_accuracy)
            continue;
        if (other.group == baseline_group)
            return &other;
        if (best == nullptr || other.best_val_accuracy->mean > best->best_val_accuracy->mean)
            best = &other;
    }
    return best;
}

QStringList noise_notes(const GroupSummary& mine, const GroupSummary& other) {
    QStringList notes;
    if (mine.best_val_accuracy && other.best_val_accuracy)
        notes << noise_note(QStringLiteral("best val acc"), *mine.best_val_accuracy,
                            *other.best_val_accuracy, 3);
    if (mine.time_to_target_s && other.time_to_target_s && mine.target == other.target)
        notes << noise_note(QStringLiteral("seconds to %1").arg(mine.target, 0, 'f', 2),
                            *mine.time_to_target_s, *other.time_to_target_s, 1);
    notes.removeAll(QString());
    return notes;
}

}  // namespace scalelab
