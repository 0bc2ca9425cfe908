#include "run_labels.h"

namespace scalelab {

QString run_name_problem(const QString& name) {
    if (name.size() <= longest_run_name)
        return {};
    return QStringLiteral("a run name has at most %1 characters, this one has %2: shorten it")
        .arg(longest_run_name)
        .arg(name.size());
}

QString tags_problem(const QStringList& tags) {
    if (tags.size() > most_tags)
        return QStringLiteral("a run has at most %1 tags, these are %2: drop some")
            .arg(most_tags)
            .arg(tags.size());
    for (qsizetype i = 0; i < tags.size(); ++i) {
        if (tags[i].isEmpty())
            return QStringLiteral("tag %1 is empty: give it a word, or drop it").arg(i + 1);
        if (tags[i].size() > longest_tag)
            return QStringLiteral("a tag has at most %1 characters, tag %2 has %3: shorten it")
                .arg(longest_tag)
                .arg(i + 1)
                .arg(tags[i].size());
    }
    return {};
}

QString experiment_name(const RunSpec& spec) {
    return QStringLiteral("%1, %2 dev × %3, lr %4")
        .arg(QString::fromStdString(spec.model))
        .arg(spec.devices)
        .arg(spec.batch)
        .arg(spec.lr);
}

}  // namespace scalelab
