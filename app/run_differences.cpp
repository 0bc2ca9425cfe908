#include "run_differences.h"

#include <algorithm>
#include <map>

namespace scalelab {

namespace {

QString spec_field_key(const SpecField& field) {
    return QString::fromUtf8(field.key.data(), qsizetype(field.key.size()));
}

// A set of runs as the comparison sees it: its first member's spec, and its lowest seed.
struct ComparedSpec {
    const RunSpec* spec = nullptr;
    std::uint64_t seed = 0;
};

std::vector<ComparedSpec> specs_to_compare(const std::vector<std::vector<const RunRecord*>>& sets) {
    std::vector<ComparedSpec> compared;
    for (const std::vector<const RunRecord*>& set : sets) {
        if (set.empty())
            continue;
        ComparedSpec entry{&set.front()->spec, set.front()->spec.seed};
        for (const RunRecord* run : set)
            entry.seed = std::min(entry.seed, run->spec.seed);
        compared.push_back(entry);
    }
    return compared;
}

}  // namespace

std::optional<QString> compared_value(const SpecField& field, const RunSpec& spec) {
    if (!field.applies_to(spec))
        return std::nullopt;
    return QString::fromStdString(field_value_text(field, spec));
}

QStringList fields_that_differ(const std::vector<std::vector<const RunRecord*>>& sets) {
    const std::vector<ComparedSpec> compared = specs_to_compare(sets);
    QStringList keys;
    if (compared.size() < 2)
        return keys;
    const SpecField& seed = spec_field(&RunSpec::seed);
    for (const SpecField& field : spec_fields()) {
        const std::optional<QString> first = compared_value(field, *compared.front().spec);
        const auto differs = [&](const ComparedSpec& set) {
            if (&field == &seed)
                return set.seed != compared.front().seed;
            return compared_value(field, *set.spec) != first;
        };
        if (std::any_of(compared.begin() + 1, compared.end(), differs))
            keys << spec_field_key(field);
    }
    return keys;
}

QStringList fields_that_differ(const std::vector<const RunRecord*>& runs) {
    std::vector<std::vector<const RunRecord*>> sets;
    std::map<QString, std::size_t> group_set;
    for (const RunRecord* run : runs) {
        if (run->group.isEmpty()) {
            sets.push_back({run});
            continue;
        }
        const auto [entry, added] = group_set.try_emplace(run->group, sets.size());
        if (added)
            sets.emplace_back();
        sets[entry->second].push_back(run);
    }
    return fields_that_differ(sets);
}

QString fields_text(const RunSpec& spec, const QStringList& fields) {
    QStringList parts;
    for (const QString& key : fields) {
        const SpecField* field = find_spec_field(key.toStdString());
        if (field == nullptr)
            continue;
        if (const std::optional<QString> value = compared_value(*field, spec))
            parts << QStringLiteral("%1 %2").arg(
                key, value->isEmpty() ? QStringLiteral("none") : *value);
    }
    return parts.join(QStringLiteral(" · "));
}

QString shared_value_text(const SpecField& field, const std::vector<const RunSpec*>& specs) {
    QStringList values;
    for (const RunSpec* spec : specs)
        if (const std::optional<QString> value = compared_value(field, *spec);
            value && !values.contains(*value))
            values << *value;
    if (values.isEmpty())
        return QStringLiteral("—");
    if (values.size() == 1)
        return values.front().isEmpty() ? QStringLiteral("none") : values.front();
    std::vector<double> numbers;
    for (const QString& value : values) {
        bool number = false;
        numbers.push_back(value.toDouble(&number));
        if (!number)
            return values.join(QStringLiteral(", "));
    }
    const auto [low, high] = std::minmax_element(numbers.begin(), numbers.end());
    return QStringLiteral("%1–%2").arg(values[low - numbers.begin()],
                                       values[high - numbers.begin()]);
}

}  // namespace scalelab
