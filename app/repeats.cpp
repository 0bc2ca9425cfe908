#include "repeats.h"

#include <QUuid>

#include <limits>

#include "run_group.h"

namespace scalelab {

QString repeats_problem(const QString& what, long long repeats, std::uint64_t seed) {
    if (repeats < 1 || repeats > most_repeats)
        return QStringLiteral("%1 must be a whole number from 1 to %2, got %3")
            .arg(what)
            .arg(most_repeats)
            .arg(repeats);
    // Seeds wrap around past the largest one, which would repeat seed 0's run unannounced.
    constexpr std::uint64_t largest = std::numeric_limits<std::uint64_t>::max();
    if (seed > largest - std::uint64_t(repeats - 1))
        return QStringLiteral(
                   "%1 %2 from seed %3 would pass the largest seed, %4: use a seed of at most %5")
            .arg(what)
            .arg(repeats)
            .arg(seed)
            .arg(largest)
            .arg(largest - std::uint64_t(repeats - 1));
    return {};
}

std::vector<RunSpec> repeat_specs(const RunSpec& spec, int repeats) {
    std::vector<RunSpec> specs(std::size_t(repeats), spec);
    for (int i = 0; i < repeats; ++i)
        specs[std::size_t(i)].seed = spec.seed + std::uint64_t(i);
    return specs;
}

QString new_group_id() {
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString repeat_name(const QString& name, std::uint64_t seed, int repeats) {
    return repeats > 1 ? QStringLiteral("%1 (seed %2)").arg(name).arg(seed) : name;
}

}  // namespace scalelab
